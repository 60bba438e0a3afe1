#!/usr/bin/env bash
# The engine's structure, measured: files and lines per room, the includes
# between rooms, and any that points up or sideways (src/engine/ROOMS gives
# the order, bottom first; rooms on one line may not include each other).
# docs/impl.md "Structure" quotes this output.
#
#   scripts/layers.sh           print the tables
#   scripts/layers.sh --check   the same; exit 1 when an include points up,
#                               or a file outside src/store/ holds SQL or
#                               runs a statement (every table's SQL is in
#                               src/store/tables/)
#
# grep, awk and wc only; well under a second.
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
[[ "${1:-}" == "--check" ]] && check=1

engine=src/engine
# room -> level, from ROOMS
declare -A level
n=0
while read -r line; do
  [[ -z "$line" || "$line" == \#* ]] && continue
  for room in $line; do level[$room]=$n; done
  n=$((n + 1))
done < "$engine/ROOMS"

room_of() {  # src/engine/<room>/file -> room ("profiles/x" for profiles)
  local rel=${1#"$engine"/}
  case "$rel" in
    profiles/*) echo "$(cut -d/ -f1-2 <<<"$rel")" ;;
    */*) echo "${rel%%/*}" ;;
    *) echo "(top)" ;;
  esac
}

printf '%-20s %6s %7s %5s\n' room files lines sql
total_files=0; total_lines=0; total_sql=0
for room in $(tr ' ' '\n' < <(grep -v '^#' "$engine/ROOMS") | grep -v '^$'); do
  mapfile -t files < <(find "$engine/$room" -maxdepth 1 -name '*.h' -o -maxdepth 1 -name '*.cc' | sort)
  lines=$(cat "${files[@]}" | wc -l)
  sql=$(grep -hoE '"(SELECT|INSERT|UPDATE|DELETE|WITH) ' "${files[@]}" | wc -l || true)
  printf '%-20s %6d %7d %5d\n' "$room" "${#files[@]}" "$lines" "$sql"
  total_files=$((total_files + ${#files[@]})); total_lines=$((total_lines + lines))
  total_sql=$((total_sql + sql))
done
printf '%-20s %6d %7d %5d\n' total "$total_files" "$total_lines" "$total_sql"
# SQL outside src/store/, headers and raw strings included: a keyword
# opening a string literal ("DELETE" alone is an HTTP method), or a
# statement run. Every table's SQL is in src/store/tables/.
outside_sql=$(grep -rnoE --include='*.cc' --include='*.h' '"\(?(SELECT|INSERT|UPDATE|DELETE|WITH)\s' src \
              | grep -v '^src/store/' || true)
outside_statements=$(grep -rnE --include='*.cc' --include='*.h' '(\.|->)(Query|QueryOne|Exec)\(' src \
                     | grep -v '^src/store/' || true)
ops_sql=$(grep -c '^src/ops/' <<<"$outside_sql" || true)
printf '%-20s %6s %7s %5d\n' "src/ops (not a room)" "" "" "$ops_sql"
mapfile -t table_files < <(find src/store/tables -name '*.h' -o -name '*.cc' | sort)
table_sql=$(grep -hoE '"(SELECT|INSERT|UPDATE|DELETE|WITH) ' "${table_files[@]}" | wc -l || true)
printf '%-20s %6d %7d %5d\n' "src/store/tables" "${#table_files[@]}" \
  "$(cat "${table_files[@]}" | wc -l)" "$table_sql"
echo
echo "includes between rooms (from -> to: include lines)"
bad=0
declare -A arrows
while IFS=: read -r file _ inc; do
  from=$(room_of "$file")
  target=$(sed -E 's/.*"engine\/([^"]+)".*/\1/' <<<"$inc")
  to=$(room_of "$engine/$target")
  [[ "$from" == "$to" ]] && continue
  arrows["$from -> $to"]=$(( ${arrows["$from -> $to"]:-0} + 1 ))
  if [[ -z "${level[$from]:-}" || -z "${level[$to]:-}" || ${level[$to]} -ge ${level[$from]} ]]; then
    echo "UP: $file includes engine/$target ($from may not include $to)"
    bad=1
  fi
done < <(grep -rnE '^#include "engine/' "$engine" --include='*.h' --include='*.cc')
for arrow in "${!arrows[@]}"; do printf '  %-40s %3d\n' "$arrow" "${arrows[$arrow]}"; done | sort
if [[ $bad -eq 0 ]]; then echo "none points up or sideways"; fi
if [[ -n "$outside_sql" || -n "$outside_statements" ]]; then
  echo "SQL outside src/store/: move it to the table's file in src/store/tables/"
  [[ -n "$outside_sql" ]] && echo "$outside_sql"
  [[ -n "$outside_statements" ]] && echo "$outside_statements"
  bad=1
fi
if [[ $check -eq 1 && $bad -ne 0 ]]; then exit 1; fi
