#!/usr/bin/env bash
# Installs what baton needs (Debian packages) and builds build/baton.
# Safe to run again: installs only what is missing, rebuilds incrementally.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake pkg-config git sqlite3 tmux
  libsqlite3-dev libssl-dev nlohmann-json3-dev libcpp-httplib-dev libcli11-dev
  libyaml-cpp-dev liblua5.4-dev libpq-dev libpqxx-dev libfmt-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
)
# scripts/test.sh also needs clang and its libFuzzer runtime (fuzz/), and
# Node.js with npm for the MCP end-to-end suites (tests/e2e; node >= 20,
# which this machine kind ships; Debian's nodejs package where it is absent);
# tests/security drives the server with curl and reads mirrors' extended
# attributes with python3.
if [ "${BATON_SETUP_TESTS:-0}" = "1" ]; then
  # chromium: the dashboard's browser tests (tests/e2e/dashboard*, playwright-core);
  # postgresql: the server the suites start for the PostgreSQL backend
  # (scripts/pg_test_cluster.sh; its own cluster is never used).
  PACKAGES+=(clang libclang-rt-14-dev curl chromium postgresql)
  command -v python3 >/dev/null 2>&1 || PACKAGES+=(python3)
  command -v node >/dev/null 2>&1 || PACKAGES+=(nodejs)
  command -v npm >/dev/null 2>&1 || PACKAGES+=(npm)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# scripts/install.sh needs the packages only; it makes its own Release build.
[ "${BATON_SETUP_ONLY_PACKAGES:-0}" = "1" ] && exit 0

BUILD_TYPE="${BATON_BUILD_TYPE:-RelWithDebInfo}"
cmake -S . -B build -DCMAKE_BUILD_TYPE="$BUILD_TYPE" >/dev/null
cmake --build build -j"$(nproc)" --target baton "$@"
echo "setup: built build/baton" >&2
