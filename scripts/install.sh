#!/usr/bin/env bash
# Installs baton on PATH: a Release build (build-release/), stripped, with
# shell completion for bash, zsh and fish.
#   ./scripts/install.sh                 # into /usr/local as root, else ~/.local
#   PREFIX=/opt/baton ./scripts/install.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# The Debian packages baton builds with (setup.sh installs what is missing).
BATON_SETUP_ONLY_PACKAGES=1 ./scripts/setup.sh
if [ -z "${PREFIX:-}" ]; then
  if [ "$(id -u)" -eq 0 ]; then PREFIX=/usr/local; else PREFIX="$HOME/.local"; fi
fi
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DBATON_BUILD_TESTS=OFF \
  -DBATON_BUILD_BENCHMARKS=OFF >/dev/null
echo "install: building baton (Release) in build-release/; a few minutes the first time" >&2
if ! cmake --build build-release -j"$(nproc)" --target baton >build-release/build.log 2>&1; then
  tail -n 40 build-release/build.log >&2
  exit 1
fi
cmake --install build-release --prefix "$PREFIX" --strip >/dev/null
echo "install: $PREFIX/bin/baton ($(du -h "$PREFIX/bin/baton" | cut -f1)), completion for bash, zsh and fish" >&2
case ":$PATH:" in
  *":$PREFIX/bin:"*) "$PREFIX/bin/baton" --version ;;
  *) echo "install: $PREFIX/bin is not on PATH; add it: export PATH=\"$PREFIX/bin:\$PATH\"" >&2 ;;
esac
