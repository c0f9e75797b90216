#!/usr/bin/env bash
# install-deps.sh: install, with apt-get, the Debian 12 packages zklock
# needs to build, run and test.  Installs only what is missing; needs root
# (or sudo) only when something is missing.
set -euo pipefail

pkgs=(
	make gcc
	postgresql-15 postgresql-server-dev-15	# server, PGXS, pg_regress, isolationtester
	libzookeeper-mt-dev						# the ZooKeeper C client (multi-threaded)
	zookeeper default-jre-headless			# the ZooKeeper server, for tests and the demo
	libipc-run-perl							# PostgreSQL's TAP test modules
	python3-kazoo							# interoperability tests (kazoo)
	libcurator-recipes-java default-jdk-headless	# interoperability tests (Curator)
	stunnel4 openssl						# TLS tests: a tunnel to ZooKeeper's secureClientPort, test certificates
	pgbouncer								# DISCARD ALL through a connection pooler (t/024_pgbouncer.pl)
	postgresql-15-cron						# scheduled jobs calling zklock (t/066_pg_cron.pl)
	faketime libfaketime					# a PostgreSQL server whose wall clock jumps (t/058, t/059)
	prometheus-postgres-exporter			# the statistics' custom queries, scraped (t/032_stats.pl)
	postgresql-server-dev-all debhelper lintian	# the Debian package: pg_buildext, dpkg-buildpackage, lintian (t/029_package.pl)
)

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
export DEBIAN_FRONTEND=noninteractive
as_root apt-get update -qq
as_root apt-get install -y -qq "${missing[@]}" >/dev/null
