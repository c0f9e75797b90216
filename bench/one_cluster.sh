# bench/one_cluster.sh: the cluster of bench/builds.sh, which sources it.
# Sourced, not run.  The caller sets WORK (a directory
# the postgres user can enter) and PGBIN, and calls one_cluster_start;
# then ZKPORT and PGPORT are set, $WORK/data is a new cluster that listens
# only on a socket in $WORK, with zklock.hosts naming a standalone
# ZooKeeper in $WORK/zk, and one_cluster_stop (from the caller's EXIT trap)
# stops both.

# run a command as the postgres user (PostgreSQL refuses to run as root)
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

# the first free TCP port on loopback at or above $1
free_port() {
	local p=$1
	while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
	echo "$p"
}

# one_cluster_start ZK_PORT_FROM PG_PORT_FROM: ZooKeeper started, the
# cluster made (not started)
one_cluster_start() {
	ZKPORT=$(free_port "$1")
	PGPORT=$(free_port "$2")
	test/zkctl start "$WORK/zk" "$ZKPORT" >/dev/null
	chown -R postgres "$WORK"
	as_pg "$PGBIN/initdb" -D "$WORK/data" -A trust -U postgres -E UTF8 --locale=C >/dev/null
	cat >>"$WORK/data/postgresql.conf" <<CONF
port = $PGPORT
listen_addresses = ''
unix_socket_directories = '$WORK'
zklock.hosts = '127.0.0.1:$ZKPORT'
max_connections = 100
CONF
}

one_cluster_stop() {
	as_pg "$PGBIN/pg_ctl" -D "$WORK/data" -m immediate stop >/dev/null 2>&1 || true
	test/zkctl stop "$WORK/zk" >/dev/null 2>&1 || true
}

# restart the cluster (stopped or not)
pg_restart() {
	as_pg "$PGBIN/pg_ctl" -D "$WORK/data" -m fast stop >/dev/null 2>&1 || true
	as_pg "$PGBIN/pg_ctl" -D "$WORK/data" -l "$WORK/log" -w start >/dev/null
}
psql_() { as_pg "$PGBIN/psql" -X -q -At -h "$WORK" -p "$PGPORT" -d postgres "$@"; }
pgbench_() { as_pg "$PGBIN/pgbench" -h "$WORK" -p "$PGPORT" "$@" postgres; }
