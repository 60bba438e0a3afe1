#!/usr/bin/env bash
# Sets everything up, then runs the main job: `baton serve` on the embedded
# store (the nearest .baton/baton.db, made in the current folder when none is
# found), printing where it listens.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
"$here/scripts/setup.sh"
exec "$here/build/baton" serve "$@"
