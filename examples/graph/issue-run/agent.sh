#!/bin/sh
# A stand-in for an agent command line such as `claude -p PROMPT`: logs the
# call, counts the fixes it was asked for, and answers.
echo "$BATON_GRAPH_NODE #$BATON_GRAPH_SEQ" >> calls.log
case "$1" in
  Fix*) n=$(cat fixes 2>/dev/null || echo 0); echo $((n + 1)) > fixes ;;
esac
printf 'done: %s\n' "$(printf '%s' "$1" | head -n 1)"
