#!/usr/bin/env bash
# run_target.sh TARGET RUNS CORPUS_DIR SEED... — runs one libFuzzer target for
# RUNS inputs, starting from the seed files or folders (copied into a corpus
# folder of its own, so the fixtures are never written to). A crash, a leak,
# a sanitizer report or a broken round trip fails it.
set -euo pipefail
target="$1" runs="$2" corpus="$3"
shift 3
rm -rf "$corpus"
mkdir -p "$corpus"
for seed in "$@"; do
  if [ -d "$seed" ]; then cp -r "$seed"/. "$corpus"/; elif [ -e "$seed" ]; then cp "$seed" "$corpus"/; fi
done
exec "$target" -runs="$runs" -max_len=16384 -timeout=20 -rss_limit_mb=2048 \
  -print_final_stats=1 "$corpus"
