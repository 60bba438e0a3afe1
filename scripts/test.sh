#!/usr/bin/env bash
# Sets everything up and runs every test:
#   1. the release build (build/): unit suites and the scenario tests that
#      drive build/baton as separate processes;
#   1b. the end-to-end suites of tests/e2e: the official MCP TypeScript SDK
#      clients (npm, from the committed lock file) driving `baton mcp` and
#      `baton serve`'s /mcp; then the official MCP conformance suite
#      (tests/conformance) against /mcp;
#   2. a clang build with AddressSanitizer, UBSan and libFuzzer's coverage
#      (build-asan/): the unit suites again (the PostgreSQL backend through
#      BackendTest's "postgres" cases; the "pg:" reruns of whole suites run
#      in step 1 only), and the libFuzzer targets of fuzz/, each for a
#      bounded number of inputs.
# CTest starts and stops a PostgreSQL server of its own for the suites
# (fixture "postgres", scripts/pg_test_cluster.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="$(nproc)"
# Every result is checked against its output schema while testing.
export BATON_CHECK_OUTPUT=1
# Where the time goes, for keeping the whole run short: each step's start.
step() { echo "test.sh: $1 at $((SECONDS / 60))m$((SECONDS % 60))s"; }

step "setup"
BATON_SETUP_TESTS=1 ./scripts/setup.sh
step "release build"
cmake --build build -j"$jobs"
step "release suites"
(cd build && ctest --output-on-failure -j"$jobs" --timeout 600)

step "end-to-end suites"
(cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error)
(cd tests/e2e && BATON_BIN="$PWD/../../build/baton" timeout 900 node --test --test-concurrency=1)
# The official MCP conformance suite against /mcp (tests/conformance/run.sh).
step "MCP conformance"
(cd tests/conformance && npm ci --no-audit --no-fund --loglevel=error)
BATON_BIN="$PWD/build/baton" timeout 600 tests/conformance/run.sh

if [ "${BATON_SKIP_ASAN:-0}" != "1" ]; then
  # One clang build with ASan, UBSan and libFuzzer's coverage counters serves
  # both the unit suites and the fuzz targets (it was two trees, compiling the
  # engine twice); -O1, as the sanitizers' authors advise.
  step "sanitizer build"
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1" -DBATON_FUZZ=ON -DBATON_BUILD_BENCHMARKS=OFF \
    -DBATON_SCENARIO_SUITES=OFF >/dev/null
  cmake --build build-asan -j"$jobs"
  step "sanitizer suites and fuzz targets"
  (cd build-asan && ctest --output-on-failure -j"$jobs" -L 'unit|fuzz' -E '^pg:' --timeout 900)
fi
step "end"
echo "test.sh: all tests passed"
