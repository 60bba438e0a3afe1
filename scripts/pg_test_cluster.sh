#!/usr/bin/env bash
# A throwaway PostgreSQL server for the test suites (CTest's fixture
# "postgres", tests/CMakeLists.txt):
#
#   scripts/pg_test_cluster.sh start DIR   initdb into DIR (emptied first),
#                                          start it on a Unix socket in DIR
#   scripts/pg_test_cluster.sh stop DIR    stop it and remove DIR
#   scripts/pg_test_cluster.sh start DIR --durable
#                                          the same with PostgreSQL's default
#                                          durability (fsync, synchronous
#                                          commit): bench/postgres.cc
#
# Tests connect with postgresql:///postgres?host=DIR&user=baton (no TCP port,
# so parallel runs never clash) and each makes its own database from a
# template (tests/testing/pg_test_db.h). fsync is off: these servers test
# behaviour, not durability (bench/ measures that on a --durable server).
# initdb refuses to run as root; as root, the folder belongs to "postgres"
# and the server runs as that user.
set -euo pipefail
action="${1:?usage: pg_test_cluster.sh start|stop DIR}"
dir="${2:?usage: pg_test_cluster.sh start|stop DIR}"
settings="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
[ "${3:-}" = "--durable" ] && settings=""

bindir="$(pg_config --bindir 2>/dev/null || true)"
[ -x "$bindir/initdb" ] || bindir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
if [ ! -x "$bindir/initdb" ]; then
  echo "pg_test_cluster: no initdb (install Debian's postgresql: BATON_SETUP_TESTS=1 scripts/setup.sh)" >&2
  exit 1
fi
as_owner=()
[ "$(id -u)" -eq 0 ] && as_owner=(runuser -u postgres --)

stop() {
  if [ -f "$dir/data/postmaster.pid" ]; then
    "${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
}

case "$action" in
  start)
    # A server left by a killed run is stopped first, never recovered.
    stop
    rm -rf "$dir"
    # Private: the server trusts every connection on its socket, as a
    # superuser, so no other user of the machine may reach it.
    mkdir -m 700 -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres "$dir"
    "${as_owner[@]}" "$bindir/initdb" -D "$dir/data" -A trust -U baton --no-sync -E UTF8 \
      --locale=C >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    "${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -w -t 60 -l "$dir/server.log" -o \
      "-k $dir -c listen_addresses='' -c unix_socket_permissions=0700 $settings -c max_connections=300" \
      start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    echo "pg_test_cluster: PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') on $dir"
    ;;
  stop)
    stop
    rm -rf "$dir"
    ;;
  *)
    echo "pg_test_cluster: unknown action $action (start or stop)" >&2
    exit 2
    ;;
esac
