#!/usr/bin/env bash
# demo.sh: from a fresh Debian 12 machine to zklock working.
#
#   1. installs what is missing (apt-get), builds and installs zklock;
#   2. starts a standalone ZooKeeper on 127.0.0.1:2181 (zklock's default
#      zklock.hosts) unless one already answers there, configures the
#      Debian PostgreSQL 15 cluster "main" with test/demo-postgresql.conf
#      (zklock in shared_preload_libraries, which the README's tour uses)
#      and starts it, or restarts it if that file changed;
#   3. creates the database zklock_demo with the extension and shows two
#      sessions contending for the lock /jobs/nightly.
#
# Both servers are left running so that you can try zklock yourself; the
# script prints how to connect and how to stop them.  Run it again at will.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
as_postgres() {
	if [ "$(id -un)" = postgres ]; then "$@"
	elif [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"
	else sudo -u postgres "$@"; fi
}
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "installing what is missing, building, installing"
test/install-deps.sh
make -s
as_root make -s install >/dev/null
echo "zklock installed into $(pg_config --pkglibdir)"

say "ZooKeeper on 127.0.0.1:2181"
ZKDIR=/var/lib/zklock-demo/zookeeper
if test/zkctl 4lw 2181 ruok | grep -q imok; then
	echo "a ZooKeeper server already answers on 127.0.0.1:2181; using it"
else
	as_root mkdir -p "$ZKDIR"
	as_root test/zkctl start "$ZKDIR" 2181
	echo "started a standalone ZooKeeper (data in $ZKDIR)"
fi

say "PostgreSQL 15 cluster \"main\""
if ! pg_lsclusters -h 2>/dev/null | awk '$1 == 15 && $2 == "main"' | grep -q .; then
	as_root pg_createcluster 15 main >/dev/null
fi
PGPORT=$(pg_lsclusters -h | awk '$1 == 15 && $2 == "main" {print $3}')
# the settings the README's tour needs (zklock preloaded, for zk_stat):
# test/demo-postgresql.conf, which test/t/031_doc_examples.pl uses too
DEMO_CONF=/etc/postgresql/15/main/conf.d/zklock-demo.conf
restart=no
if ! cmp -s test/demo-postgresql.conf "$DEMO_CONF"; then
	as_root install -D -m 644 -o postgres -g postgres test/demo-postgresql.conf "$DEMO_CONF"
	echo "configured the cluster with $DEMO_CONF (from test/demo-postgresql.conf):"
	grep -v '^#' test/demo-postgresql.conf | grep . | sed 's/^/    /'
	restart=yes
fi
if ! pg_lsclusters -h | awk '$1 == 15 && $2 == "main" {print $4}' | grep -q online; then
	as_root pg_ctlcluster 15 main start
elif [ "$restart" = yes ]; then
	# shared_preload_libraries takes effect at server start only
	as_root pg_ctlcluster 15 main restart
fi
echo "cluster 15/main is online on port $PGPORT"
export PGPORT

psql_demo() { as_postgres psql -X -q -p "$PGPORT" -d zklock_demo "$@"; }
if ! as_postgres psql -X -Atq -p "$PGPORT" -d postgres \
	-c "SELECT 1 FROM pg_database WHERE datname = 'zklock_demo'" | grep -q 1; then
	as_postgres createdb -p "$PGPORT" zklock_demo
fi
psql_demo -c 'CREATE EXTENSION IF NOT EXISTS zklock'

say "two sessions contend for /jobs/nightly"
echo "session A takes the lock and holds it for 3 seconds:"
psql_demo -At -v ON_ERROR_STOP=1 <<'SQL' | sed -u 's/^/  A| /' &
SET application_name = 'nightly-A';
SELECT 'A holds /jobs/nightly, fencing token ' || zk_lock('/jobs/nightly');
DO $$ BEGIN PERFORM pg_sleep(3); END $$;
SELECT 'A releases: ' || zk_unlock('/jobs/nightly');
SQL
apid=$!
sleep 1
echo "session B, meanwhile:"
psql_demo -e <<'SQL' | sed -u 's/^/  B| /'
SET application_name = 'nightly-B';
SELECT zk_try_lock('/jobs/nightly') AS got_it_at_once;
SELECT position, mode, granted, host, pid, application_name
  FROM zk_lock_queue('/jobs/nightly');
\timing on
SELECT zk_lock('/jobs/nightly') AS fencing_token;   -- waits until A releases
\timing off
SELECT path, mode, scope, hold_count, fencing_token, waited FROM zk_locks;
SELECT zk_unlock('/jobs/nightly');
SQL
wait "$apid"

say "done"
cat <<EOF
zklock works.  Try it yourself:
    $( [ "$(id -u)" -eq 0 ] && echo "runuser -u postgres --" || echo "sudo -u postgres") psql -p $PGPORT zklock_demo
    zklock_demo=# SELECT zk_lock('/jobs/nightly');
ZooKeeper keeps running on 127.0.0.1:2181; stop it with
    $( [ "$(id -u)" -eq 0 ] || echo "sudo ")test/zkctl stop $ZKDIR
EOF
