#!/usr/bin/env bash
# test/devdb.sh: a throwaway PostgreSQL cluster for development and demos.
#
#   test/devdb.sh start NAME PORT   init (if needed) and start /tmp/jobq-NAME
#   test/devdb.sh stop NAME         stop it
#   test/devdb.sh destroy NAME      stop it and remove its files
#
# The cluster runs as the "postgres" OS user (PostgreSQL refuses root),
# listens on its own unix socket directory only, and trusts local
# connections.  Prints the conninfo to use.
set -euo pipefail
cmd=${1:?usage: devdb.sh start|stop|destroy NAME [PORT]}
name=${2:?name required}
port=${3:-5499}
bindir=$(pg_config --bindir)
dir=/tmp/jobq-$name
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

case $cmd in
start)
	if [ ! -d "$dir/data" ]; then
		mkdir -p "$dir/sock"
		[ "$(id -u)" = 0 ] && chown -R postgres:postgres "$dir"
		as_pg "$bindir/initdb" -D "$dir/data" -U postgres -A trust --no-sync >/dev/null
		cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = ''
port = $port
unix_socket_directories = '$dir/sock'
max_connections = 200
fsync = off
${JOBQ_DEVDB_EXTRA_CONF:-}
CONF
	fi
	if ! as_pg "$bindir/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
		as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start >/dev/null
	fi
	echo "host=$dir/sock port=$port user=postgres dbname=postgres"
	;;
stop)
	as_pg "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
	;;
destroy)
	as_pg "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
	rm -rf "$dir"
	;;
*)
	echo "usage: devdb.sh start|stop|destroy NAME [PORT]" >&2; exit 2 ;;
esac
