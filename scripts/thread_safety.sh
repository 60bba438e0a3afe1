#!/usr/bin/env bash
# clang's thread-safety analysis over every source file that locks a
# baton::Mutex (src/util/mutex.h): a member annotated GUARDED_BY(mu_) read or
# written without mu_ held, a REQUIRES(mu_) function called without it, or a
# lock not released fails the check. The release build is gcc's, which
# ignores the annotations; this runs clang -fsyntax-only with the flags
# BUILD_DIR/compile_commands.json has for each file (CTest: thread_safety_check).
#
#   scripts/thread_safety.sh BUILD_DIR
#
# It first compiles a probe that breaks the rule and must be refused, so a
# clang that stopped analysing cannot pass it. It also refuses a
# "// GUARDED_BY(...)" comment: with baton::Mutex the annotation is real.
# Exit 77 (CTest: skipped) when clang++ is not installed
# (BATON_SETUP_TESTS=1 scripts/setup.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:?usage: scripts/thread_safety.sh BUILD_DIR}"
commands="$build/compile_commands.json"
if ! command -v clang++ >/dev/null; then
  echo "thread_safety.sh: needs clang++ (BATON_SETUP_TESTS=1 scripts/setup.sh installs it)" >&2
  exit 77
fi
[[ -f "$commands" ]] || { echo "thread_safety.sh: no $commands" >&2; exit 1; }
flags=(-fsyntax-only -Wthread-safety -Werror=thread-safety)

probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
cat >"$probe/probe.cc" <<'EOF'
#include "util/mutex.h"
struct Probe {
  baton::Mutex mu;
  int guarded GUARDED_BY(mu) = 0;
  int Read() { return guarded; }  // without mu: must be refused
};
EOF
if clang++ -std=c++20 -Isrc "${flags[@]}" "$probe/probe.cc" 2>/dev/null; then
  echo "thread_safety.sh: clang accepted an unguarded read; the analysis is not running" >&2
  exit 1
fi

status=0
if grep -rn --include=*.h --include=*.cc '//.*GUARDED_BY(' src | grep -v '^src/util/mutex.h:'; then
  echo "thread_safety.sh: GUARDED_BY above is a comment; annotate the member of a baton::Mutex" >&2
  status=1
fi

# The files that lock a Mutex or declare what one guards, with their
# compile commands (gcc's, run by clang without -o/-c/optimisation flags
# and without gcc's precompiled header).
mapfile -t files < <(grep -rlE --include=*.cc 'MutexLock|GUARDED_BY\(|REQUIRES\(' src | sort)
python3 - "$commands" "$PWD" "${files[@]}" >"$probe/commands" <<'EOF'
import json, shlex, sys
entries = {e["file"]: e for e in json.load(open(sys.argv[1]))}
for rel in sys.argv[3:]:
    e = entries.get(sys.argv[2] + "/" + rel)
    if e is None:
        sys.exit(f"thread_safety.sh: {rel} is not in {sys.argv[1]}")
    words = shlex.split(e["command"])[1:]
    args, skip = [], False
    for i, a in enumerate(words):
        pch = a == "-include" and i + 1 < len(words) and words[i + 1].endswith("cmake_pch.hxx")
        if skip:
            skip = False
        elif a in ("-o", "-c") or pch:  # pch: gcc's precompiled header, not clang's
            skip = True
        elif not (a == "-Winvalid-pch" or a.startswith("-O") or a.startswith("-g") or
                  a.startswith("-fsanitize")):
            args.append(a)
    print(shlex.quote(e["directory"]), shlex.join(args), shlex.quote(e["file"]))
EOF
check_one() {  # directory, flags..., file
  local dir="$1"
  shift
  (cd "$dir" && clang++ "$@" -fsyntax-only -Wno-everything -Wthread-safety -Werror=thread-safety)
}
export -f check_one
if ! xargs -P "$(nproc)" -L 1 bash -c 'check_one "$@"' _ <"$probe/commands"; then
  status=1
fi
if [[ $status -eq 0 ]]; then
  echo "thread_safety.sh: ${#files[@]} files checked, no thread-safety warning"
fi
exit $status
