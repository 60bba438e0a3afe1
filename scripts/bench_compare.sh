#!/usr/bin/env bash
# Compares two revisions on the write-path benchmarks: the HEAD commit of the
# repository this script lives in against BASE_REV.
#
#   scripts/bench_compare.sh BASE_REV [ROUNDS]        # ROUNDS defaults to 5
#
# Why this way: the machines are shared 2-core VMs whose absolute figures move
# from run to run (and with whatever else is compiling beside them), so two
# numbers measured at different times say little. This script builds both
# revisions, then runs them alternately in one run, round after round, in
# ABBA order (base first in odd rounds, head first in even ones) so that load
# drifting over the run falls on both alike, and reports per figure the
# median of each side and only the ratio head/base.
#
# What it does:
#   1. Two detached git worktrees under $BENCH_DIR (default
#      ${TMPDIR:-/tmp}/baton-bench-compare): base/ at BASE_REV, head/ at HEAD
#      (old ones there are removed first). The committed trees are measured:
#      uncommitted changes of the main work tree are not in head/.
#   2. In each: cmake -S . -B build -DCMAKE_BUILD_TYPE=Release and a build of
#      only baton_throughput and baton_graph_chain. The main tree's build
#      folders are never touched. ccache is used when present (its base_dir
#      is set to $BENCH_DIR so both worktrees share cache entries, and its
#      sloppiness lets it cache files built with a precompiled header).
#   3. LangGraph.js, which baton_graph_chain runs beside baton, is installed
#      once with `npm ci` from HEAD's bench/langgraph lock file into
#      $BENCH_DIR/langgraph and handed to both revisions with --langgraph, so
#      both run the same reference (its nodes/s is a noise control: its
#      ratio should be ~1.00).
#   4. ROUNDS rounds of: baton_throughput --seconds $BENCH_SECONDS (default
#      3) and baton_graph_chain --rounds 1 --nodes $BENCH_GRAPH_NODES
#      (default 1000), each under `timeout`. Raw outputs stay in
#      $BENCH_DIR/results/.
#   5. A table: bench, metric, better (higher/lower), base median, head
#      median, ratio head/base. The raw SQLite row of baton_throughput and the
#      LangGraph rows of baton_graph_chain do not depend on baton's code:
#      their ratios show how much noise the run had.
#   6. The worktrees are removed at exit (BENCH_KEEP=1 keeps them to look into).
#
# Environment: BENCH_DIR, BENCH_SECONDS, BENCH_GRAPH_NODES, BENCH_KEEP,
# BENCH_PATCH_GRAPH_GRANTS (see below).
set -euo pipefail

usage() {
  echo "usage: $0 BASE_REV [ROUNDS]" >&2
  exit 2
}
[ $# -ge 1 ] && [ $# -le 2 ] || usage
BASE_ARG="$1"
ROUNDS="${2:-5}"
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || usage

SECONDS_PER_ROW="${BENCH_SECONDS:-3}"
GRAPH_NODES="${BENCH_GRAPH_NODES:-1000}"
BENCH_DIR="${BENCH_DIR:-${TMPDIR:-/tmp}/baton-bench-compare}"
KEEP="${BENCH_KEEP:-0}"

REPO="$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
BASE="$(git -C "$REPO" rev-parse --verify "${BASE_ARG}^{commit}")"
HEAD="$(git -C "$REPO" rev-parse --verify "HEAD^{commit}")"
BASE_SHORT="$(git -C "$REPO" rev-parse --short "$BASE")"
HEAD_SHORT="$(git -C "$REPO" rev-parse --short "$HEAD")"

mkdir -p "$BENCH_DIR"
BENCH_DIR="$(cd "$BENCH_DIR" && pwd -P)"
RESULTS="$BENCH_DIR/results"
DATA="$BENCH_DIR/data"
LANGGRAPH="$BENCH_DIR/langgraph"

log() { echo "bench_compare: $*" >&2; }

# Removes the worktree at $1 if there is one (registered or left over).
remove_worktree() {
  local dir="$1"
  if git -C "$REPO" worktree list --porcelain | grep -qxF "worktree $dir"; then
    git -C "$REPO" worktree remove --force "$dir"
  fi
  rm -rf -- "$dir"
  git -C "$REPO" worktree prune
}

cleanup() {
  if [ "$KEEP" != "1" ]; then
    remove_worktree "$BENCH_DIR/base" || true
    remove_worktree "$BENCH_DIR/head" || true
  fi
}

log "base $BASE_SHORT ($BASE_ARG), head $HEAD_SHORT; $ROUNDS rounds; scratch $BENCH_DIR"
remove_worktree "$BENCH_DIR/base"
remove_worktree "$BENCH_DIR/head"
trap cleanup EXIT
rm -rf -- "$RESULTS" "$DATA"
mkdir -p "$RESULTS" "$DATA"

git -C "$REPO" worktree add --detach "$BENCH_DIR/base" "$BASE" >/dev/null
git -C "$REPO" worktree add --detach "$BENCH_DIR/head" "$HEAD" >/dev/null

# Before commit "bench: graph_chain runs as the user at the terminal",
# baton_graph_chain called graph.run with an inline definition as an actor
# with no grants, which graph.run refuses (the grant "definitions";
# PermissionDenied, the bench exits 1). An older revision gets that one-line
# fix in its scratch worktree (never in the tree this script is run from),
# only where the bench still has the old line. BENCH_PATCH_GRAPH_GRANTS=0
# turns this off.
if [ "${BENCH_PATCH_GRAPH_GRANTS:-1}" = "1" ]; then
  for side in base head; do
    f="$BENCH_DIR/$side/bench/graph_chain.cc"
    if grep -qF 'const Actor actor{"bench", "coordinator"};' "$f"; then
      sed -i 's/const Actor actor{"bench", "coordinator"};/const Actor actor{"bench", "coordinator", AllGrants()};/' "$f"
      log "$side: patched bench/graph_chain.cc in the worktree (actor given AllGrants(), as the CLI)"
      echo "$side: bench/graph_chain.cc actor given AllGrants()" >>"$RESULTS/patches.txt"
    fi
  done
fi

# --- build ------------------------------------------------------------------
CMAKE_EXTRA=()
if command -v ccache >/dev/null 2>&1 && [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ]; then
  CMAKE_EXTRA+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$BENCH_DIR"
  # The libraries' precompiled header (BATON_PCH) is cached only with these.
  export CCACHE_SLOPPINESS="pch_defines,time_macros,include_file_mtime,include_file_ctime"
fi
for side in base head; do
  log "building $side"
  start=$(date +%s)
  (
    cd "$BENCH_DIR/$side"
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${CMAKE_EXTRA[@]}" >"$RESULTS/build-$side.log" 2>&1
    cmake --build build -j2 --target baton_throughput baton_graph_chain >>"$RESULTS/build-$side.log" 2>&1
  ) || { log "build of $side failed, see $RESULTS/build-$side.log"; tail -n 30 "$RESULTS/build-$side.log" >&2; exit 1; }
  log "built $side in $(( $(date +%s) - start )) s"
done

# Both revisions must take the flags used below.
for side in base head; do
  for flag in --seconds --dir; do
    grep -q -- "\"$flag\"" "$BENCH_DIR/$side/bench/throughput.cc" ||
      { log "$side's baton_throughput has no $flag"; exit 1; }
  done
  for flag in --nodes --rounds --dir --langgraph; do
    grep -q -- "\"$flag\"" "$BENCH_DIR/$side/bench/graph_chain.cc" ||
      { log "$side's baton_graph_chain has no $flag"; exit 1; }
  done
done

# --- LangGraph.js for baton_graph_chain (the same install for both sides) ----
if ! cmp -s "$BENCH_DIR/head/bench/langgraph/package-lock.json" "$LANGGRAPH/package-lock.json" ||
   [ ! -d "$LANGGRAPH/node_modules" ]; then
  log "installing LangGraph.js (npm ci) into $LANGGRAPH"
  rm -rf -- "$LANGGRAPH"
  mkdir -p "$LANGGRAPH"
  cp "$BENCH_DIR/head/bench/langgraph/"{package.json,package-lock.json} "$LANGGRAPH/"
  (cd "$LANGGRAPH" && npm ci --no-audit --no-fund --loglevel=error) >"$RESULTS/npm.log" 2>&1 ||
    { log "npm ci failed, see $RESULTS/npm.log"; exit 1; }
fi
cp "$BENCH_DIR/head/bench/langgraph/chain.mjs" "$LANGGRAPH/chain.mjs"
cmp -s "$BENCH_DIR/base/bench/langgraph/chain.mjs" "$LANGGRAPH/chain.mjs" ||
  log "note: base's bench/langgraph/chain.mjs differs from head's; both run head's"

# --- runs -------------------------------------------------------------------
RECORDS="$RESULTS/records.tsv"   # round, side, bench, metric, better, value
: >"$RECORDS"
THROUGHPUT_TIMEOUT=$(awk -v s="$SECONDS_PER_ROW" 'BEGIN { printf "%d", 9 * s * 3 + 120 }')
GRAPH_TIMEOUT=900

run_throughput() {  # round side
  local round="$1" side="$2" out="$RESULTS/r$1-$2-throughput.txt"
  if ! timeout "$THROUGHPUT_TIMEOUT" "$BENCH_DIR/$side/build/bench/baton_throughput" \
      --seconds "$SECONDS_PER_ROW" --dir "$DATA" >"$out" 2>"$out.err"; then
    log "round $round $side: baton_throughput failed or timed out (see $out.err)"
    return 0
  fi
  awk -F'|' -v r="$round" -v s="$side" '
    function trim(x) { gsub(/^[ \t]+|[ \t]+$/, "", x); return x }
    trim($2) == "what" { for (i = 1; i <= NF; i++) if (trim($i) == "mean batch") mb = i }
    $2 ~ /raw SQLite, one/ { print r "\t" s "\tthroughput\traw sqlite ops/s (control)\thigher\t" trim($4) }
    $2 ~ /engine/ {
      n = trim($3)
      print r "\t" s "\tthroughput\tengine " n " submitters ops/s\thigher\t" trim($4)
      print r "\t" s "\tthroughput\tengine " n " submitters mean batch\tinfo\t" trim($mb)
    }
    $2 ~ /HTTP/ { print r "\t" s "\tthroughput\thttp " trim($3) " clients ops/s\thigher\t" trim($4) }
  ' "$out" >>"$RECORDS"
}

run_graph_chain() {  # round side
  local round="$1" side="$2" out="$RESULTS/r$1-$2-graph_chain.txt"
  if ! timeout "$GRAPH_TIMEOUT" "$BENCH_DIR/$side/build/bench/baton_graph_chain" \
      --nodes "$GRAPH_NODES" --rounds 1 --dir "$DATA" --langgraph "$LANGGRAPH/chain.mjs" \
      >"$out" 2>"$out.err"; then
    log "round $round $side: baton_graph_chain failed or timed out (see $out.err)"
    return 0
  fi
  awk -F'|' -v r="$round" -v s="$side" '
    function trim(x) { gsub(/^[ \t]+|[ \t]+$/, "", x); return x }
    function num(x) { x = trim(x); gsub(/[^0-9.]/, "", x); return x }
    $2 ~ /checkpointed no-op nodes/ {
      print r "\t" s "\tgraph_chain\tbaton nodes/s (durability full)\thigher\t" num($3)
      print r "\t" s "\tgraph_chain\tbaton ms/node (durability full)\tlower\t" 1000 / num($3)
      print r "\t" s "\tgraph_chain\tLangGraph.js nodes/s (control)\thigher\t" num($4)
    }
    $2 ~ /durability normal/ {
      print r "\t" s "\tgraph_chain\tbaton nodes/s (durability normal)\thigher\t" num($3)
    }
    $2 ~ /store after/ {
      print r "\t" s "\tgraph_chain\tbaton store MB (+1 message/node)\tlower\t" num($3)
      print r "\t" s "\tgraph_chain\tLangGraph.js store MB (control)\tlower\t" num($4)
    }
  ' "$out" >>"$RECORDS"
}

for round in $(seq 1 "$ROUNDS"); do
  if [ $((round % 2)) -eq 1 ]; then order="base head"; else order="head base"; fi
  log "round $round/$ROUNDS ($order) at $(date +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
  for side in $order; do run_throughput "$round" "$side"; done
  for side in $order; do run_graph_chain "$round" "$side"; done
done

# --- summary ----------------------------------------------------------------
python3 - "$RECORDS" "$BASE_SHORT" "$HEAD_SHORT" "$ROUNDS" <<'EOF'
import sys
from statistics import median

path, base, head, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
rows = {}   # (bench, metric, better) -> {side: {round: value}}
order = []
for line in open(path):
    r, side, bench, metric, better, value = line.rstrip("\n").split("\t")
    key = (bench, metric, better)
    if key not in rows:
        rows[key] = {"base": {}, "head": {}}
        order.append(key)
    try:
        rows[key][side][int(r)] = float(value)
    except ValueError:
        pass

def fmt(x):
    return f"{x:.3f}" if abs(x) < 10 else f"{x:.0f}"

print(f"\nbase {base}, head {head}, {rounds} rounds (ABBA); medians; ratio = head/base\n")
print("| bench | metric | better | base median | head median | ratio head/base | median of per-round ratios |")
print("|---|---|---|---:|---:|---:|---:|")
for key in order:
    bench, metric, better = key
    b, h = list(rows[key]["base"].values()), list(rows[key]["head"].values())
    if not b or not h:
        print(f"| {bench} | {metric} | {better} | {'-' if not b else fmt(median(b))} | "
              f"{'-' if not h else fmt(median(h))} | - | - |")
        continue
    mb, mh = median(b), median(h)
    ratio = f"{mh / mb:.3f}" if mb else "-"
    # Base and head of one round ran back to back, under much the same load.
    per_round = [rows[key]["head"][i] / rows[key]["base"][i] for i in rows[key]["base"]
                 if i in rows[key]["head"] and rows[key]["base"][i]]
    paired = f"{median(per_round):.3f}" if per_round else "-"
    print(f"| {bench} | {metric} | {better} | {fmt(mb)} | {fmt(mh)} | {ratio} | {paired} |")
print("\nbetter: 'higher' means a ratio above 1 favours head; 'lower' (time, bytes) means a "
      "ratio below 1 favours head.")

print("\nRaw values per round (base / head):\n")
print("| bench | metric | " + " | ".join(f"r{i}" for i in range(1, rounds + 1)) + " |")
print("|---|---|" + "---:|" * rounds)
for key in order:
    cells = []
    for i in range(1, rounds + 1):
        b = rows[key]["base"].get(i)
        h = rows[key]["head"].get(i)
        cells.append(f"{'-' if b is None else fmt(b)} / {'-' if h is None else fmt(h)}")
    print(f"| {key[0]} | {key[1]} | " + " | ".join(cells) + " |")
EOF
log "raw outputs in $RESULTS"
