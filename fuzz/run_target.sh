#!/usr/bin/env bash
# run_target.sh TARGET RUNS CORPUS_DIR SEED... — runs one libFuzzer target for
# RUNS inputs, starting from the seed files or folders (copied into a corpus
# folder of its own, so the fixtures are never written to). A crash, a leak,
# a sanitizer report or a broken round trip fails it.
#
# The search is seeded with BATON_FUZZ_SEED (default 1), so the gate CI runs
# is the same search every time: a failure reproduces with the command it
# prints, and a landing is never lost to a find that a different commit's run
# would not have made. BATON_FUZZ_SEED=0 lets libFuzzer pick (a hunt, not a
# gate); every crash found that way is fixed and its input kept in
# fuzz/seeds/, so the gate tries it from then on.
set -euo pipefail
target="$1" runs="$2" corpus="$3"
shift 3
rm -rf "$corpus"
mkdir -p "$corpus"
for seed in "$@"; do
  if [ -d "$seed" ]; then cp -r "$seed"/. "$corpus"/; elif [ -e "$seed" ]; then cp "$seed" "$corpus"/; fi
done
exec "$target" -seed="${BATON_FUZZ_SEED:-1}" -runs="$runs" -max_len=16384 -timeout=20 -rss_limit_mb=2048 \
  -print_final_stats=1 "$corpus"
