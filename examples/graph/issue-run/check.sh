#!/bin/sh
# The project's tests: they fail until two fixes have been made. With a file
# "hang" holding an execution number, that execution hangs (a test kills
# baton in the middle of it).
echo "TEST #$BATON_GRAPH_SEQ try $BATON_GRAPH_ATTEMPT" >> calls.log
if [ -f hang ] && [ "$(cat hang)" = "$BATON_GRAPH_SEQ" ]; then
  echo $$ > hang.pid
  sleep 60
fi
n=$(cat fixes 2>/dev/null || echo 0)
if [ "$n" -ge 2 ]; then echo "all 12 tests pass"; exit 0; fi
echo "2 of 12 tests fail (fixes so far: $n)" >&2
exit 1
