#!/usr/bin/env bash
# test/package-test.sh: the Debian packages, built from this tree and used
# the way an operator would, with no source tree involved.
#
#   test/package-test.sh      (as root: it installs and purges packages)
#
# 1. builds them (dpkg-buildpackage -us -uc -b in a copy of the tree) and
#    runs lintian, which must report no error and no warning;
# 2. installs them with apt-get install ./*.deb;
# 3. from /, with the packaged programs only: a fresh cluster, CREATE
#    EXTENSION, jobs enqueued by the packaged jobq, drained by the packaged
#    jobq-worker run with its systemd unit's command line and an instance
#    settings file, and a C program built against libjobq-dev through
#    pkg-config;
# 4. purges them: no file of theirs is left, and the database still reads
#    its jobs and drops the extension.
# Files that `make install` had put where the packages install theirs are
# overwritten, then removed by the purge: the tree's own install is redone at
# the end.  Prints "ok"/"not ok" per check and "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "package-test.sh: run as root (it installs packages)" >&2; exit 2; }
# the packages install into the system's PostgreSQL 15: so must the tree
[ "$(pg_config --bindir)" = /usr/lib/postgresql/15/bin ] ||
	{ echo "package-test.sh: pg_config is $(command -v pg_config), not the system's PostgreSQL 15" >&2; exit 2; }
out=$(mktemp -d /tmp/jobq-pkg.XXXXXX)
port=5602
pkgs=(postgresql-15-jobq libjobq0 libjobq-dev jobq-tools)
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
notok() { failed=$((failed + 1)); echo "not ok - $1"; [ $# -gt 1 ] && printf '#   %s\n' "${@:2}"; }
check() { local name=$1; shift; if "$@" >"$out/check.log" 2>&1; then ok "$name"; else notok "$name" "$(tail -5 "$out/check.log")"; fi; }
as_pg() { runuser -u postgres -- "$@"; }
# unit_exec CONF EXECSTART: run a unit's ExecStart= as systemd would with
# EnvironmentFile=CONF: KEY=VALUE lines, the value taken whole (spaces
# included), then the command line with unquoted $VARs split at white space
unit_exec() {
	(while IFS= read -r line; do
		case $line in ''|'#'*) continue ;; esac
		export "${line%%=*}=${line#*=}"
	done <"$1"
	eval "set -- $2"; exec "$@")
}

cleanup() {
	as_pg /usr/lib/postgresql/15/bin/pg_ctl -D "$out/data" -m immediate -w stop >/dev/null 2>&1
	DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${pkgs[@]}" >/dev/null 2>&1
	# the source tree's install, as it was before (test/run-tests.sh built it)
	make -C "$here" -s install >/dev/null 2>&1 || echo "package-test.sh: could not restore make install" >&2
	ldconfig
	rm -rf "$out"
}
trap cleanup EXIT

# --- 1. build
src=$out/src/jobq
mkdir -p "$src"
if git -C "$here" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$here" && git ls-files -co --exclude-standard | grep -v '/node_modules/' | tar -cf - -T -) | tar -xf - -C "$src"
else
	cp -a "$here/." "$src/"
fi
if (cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1; then
	ok "dpkg-buildpackage -us -uc -b builds ${pkgs[*]}"
else
	notok "dpkg-buildpackage -us -uc -b" "$(tail -20 "$out/build.log")"
	echo "$passed passed, $failed failed"; exit 1
fi
for p in "${pkgs[@]}"; do
	[ -f "$out"/src/${p}_*.deb ] && ok "$p built" || notok "$p built"
done
check "lintian: no error, no warning" lintian --fail-on error,warning "$out"/src/jobq_*.changes

# --- 2. install, on a machine without the tree's own install
make -C "$here" -s uninstall >/dev/null 2>&1 || true
make -C "$here/client" -s uninstall >/dev/null 2>&1 || true
ldconfig
check "no jobq file outside the packages before the install" sh -c \
	'! ls /usr/lib/postgresql/15/lib/jobq.so /usr/share/postgresql/15/extension/jobq* /usr/local/bin/jobq* /usr/local/lib/libjobq* 2>/dev/null | grep .'
debs=()
for p in "${pkgs[@]}"; do debs+=("$(ls "$out"/src/${p}_*.deb)"); done
if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${debs[@]}" >"$out/apt.log" 2>&1; then
	ok "apt-get install ./*.deb"
else
	notok "apt-get install ./*.deb" "$(tail -10 "$out/apt.log")"
	echo "$passed passed, $failed failed"; exit 1
fi
for p in "${pkgs[@]}"; do dpkg -L "$p"; done | sort -u >"$out/files.txt"
check "jobq.so belongs to postgresql-15-jobq" sh -c 'dpkg -S /usr/lib/postgresql/15/lib/jobq.so | grep -q "^postgresql-15-jobq:"'
check "the units are installed, not enabled" sh -c \
	'test -f /lib/systemd/system/jobq-worker@.service -a -f /lib/systemd/system/jobq-web.service &&
	 ! ls /etc/systemd/system/*.wants/jobq-worker@* /etc/systemd/system/*.wants/jobq-web* 2>/dev/null'
check "the man pages are installed" test -f /usr/share/man/man1/jobq-worker.1.gz -a -f /usr/share/man/man1/jobq.1.gz \
	-a -f /usr/share/man/man1/jobq-http.1.gz -a -f /usr/share/man/man1/jobq-web.1.gz
check "jobq-http runs" sh -c '/usr/bin/jobq-http --version | grep -q "^jobq-http (jobq) 0.2.0$"'
check "jobq-web runs" sh -c '/usr/bin/jobq-web --version | grep -q "^jobq-web (jobq) 0.2.0$"'
check "the handler libraries are installed" test -f /usr/share/jobq/handlers/jobq_handler.py \
	-a -f /usr/share/jobq/handlers/jobq-handler.js

# --- 3. use, from /, with the packaged files only
cd /
mkdir -p "$out/sock" && chown -R postgres:postgres "$out"
as_pg /usr/lib/postgresql/15/bin/initdb -D "$out/data" -U postgres -A trust --no-sync >/dev/null
cat >>"$out/data/postgresql.conf" <<CONF
listen_addresses = ''
port = $port
unix_socket_directories = '$out/sock'
fsync = off
CONF
as_pg /usr/lib/postgresql/15/bin/pg_ctl -D "$out/data" -l "$out/server.log" -w start >/dev/null
export PGHOST=$out/sock PGPORT=$port PGUSER=postgres PGDATABASE=postgres
psql() { /usr/bin/psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
check "CREATE EXTENSION jobq from the package" psql -c 'CREATE EXTENSION jobq'
check "the extension is at 0.2.0" sh -c "[ \"\$(/usr/bin/psql -XAtc \"SELECT extversion FROM pg_extension WHERE extname = 'jobq'\")\" = 0.2.0 ]"
check "the packaged jobq creates a queue" /usr/bin/jobq queue create pkg
for i in $(seq 1 20); do /usr/bin/jobq enqueue pkg "{\"n\": $i}" >/dev/null || notok "jobq enqueue $i"; done
check "the packaged jobq enqueued 20 jobs" sh -c "[ \"\$(/usr/bin/psql -XAtc 'SELECT count(*) FROM jobq.jobs')\" = 20 ]"

# the unit's command line, with an instance settings file as the unit reads it
unit=/lib/systemd/system/jobq-worker@.service
cat >"$out/worker-pkg.conf" <<CONF
PGHOST=$out/sock
PGPORT=$port
PGUSER=postgres
PGDATABASE=postgres
JOBQ_WORKER_OPTIONS=--queue pkg --concurrency 2 --burst
JOBQ_HANDLER=/bin/true
CONF
execstart=$(sed -n 's/^ExecStart=//p' "$unit")
envfile=$(sed -n 's/^EnvironmentFile=//p' "$unit")
check "the unit reads /etc/jobq/worker-%i.conf" test "$envfile" = "/etc/jobq/worker-%i.conf"
unit_exec "$out/worker-pkg.conf" "$execstart" >"$out/worker.log" 2>&1
rc=$?
[ $rc -eq 0 ] && ok "the unit's ExecStart ($execstart) drains the queue and exits 0" || notok "the unit's ExecStart exits 0 (rc $rc)" "$(tail -5 "$out/worker.log")"
check "20 jobs completed by the packaged jobq-worker" sh -c \
	"[ \"\$(/usr/bin/psql -XAtc \"SELECT count(*) FROM jobq.history WHERE state = 'completed'\")\" = 20 ]"

# jobq-web with its unit's command line and a settings file: ready on loopback
cat >"$out/web.conf" <<CONF
PGHOST=$out/sock
PGPORT=$port
PGUSER=postgres
PGDATABASE=postgres
JOBQ_WEB_OPTIONS=--listen 127.0.0.1:18411
CONF
webstart=$(sed -n 's/^ExecStart=//p' /lib/systemd/system/jobq-web.service)
unit_exec "$out/web.conf" "$webstart" >"$out/web.log" 2>&1 &
webpid=$!
ready=no
for i in $(seq 1 50); do
	/usr/bin/jobq-web --listen 127.0.0.1:18411 --healthcheck >/dev/null 2>&1 && { ready=yes; break; }
	sleep 0.2
done
# unit_exec's subshell runs jobq-web as its child: stop that child too
kill $(pgrep -P "$webpid") "$webpid" 2>/dev/null; wait "$webpid" 2>/dev/null
[ $ready = yes ] && ok "the jobq-web unit's ExecStart ($webstart) serves, --healthcheck says ready" ||
	notok "the jobq-web unit's ExecStart serves" "$(tail -5 "$out/web.log")"

# libjobq-dev: a program built through pkg-config, linked to libjobq.so.0
cat >"$out/hello.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <jobq-client.h>
int main(void)
{
	printf("%s\n", jobq_version());
	return strcmp(jobq_version(), JOBQ_VERSION_STRING) != 0;
}
C
check "libjobq.pc is the package's" sh -c "[ \"\$(pkg-config --variable=libdir libjobq)\" = /usr/lib/\$(dpkg-architecture -qDEB_HOST_MULTIARCH) ]"
check "a program builds with pkg-config --cflags --libs libjobq" \
	sh -c "cc -o '$out/hello' '$out/hello.c' \$(pkg-config --cflags --libs libjobq)"
check "it runs against the packaged libjobq.so.0" sh -c \
	"'$out/hello' && ldd '$out/hello' | grep -Eq 'libjobq.so.0 => (/usr)?/lib/[^ ]*-linux-gnu/libjobq.so.0 '"

# --- 4. purge
if DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${pkgs[@]}" >"$out/purge.log" 2>&1; then
	ok "apt-get purge ${pkgs[*]}"
else
	notok "apt-get purge" "$(tail -5 "$out/purge.log")"
fi
left=$(while read -r f; do [ -e "$f" ] && [ ! -d "$f" ] && echo "$f"; done <"$out/files.txt")
[ -z "$left" ] && ok "no file of the packages is left" || notok "no file of the packages is left" $left
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q installed && notok "$p is gone" || ok "$p is gone"
done
check "the database still reads its jobs" sh -c \
	"[ \"\$(/usr/bin/psql -XAtc 'SELECT count(*) FROM jobq.history')\" = 20 ]"
msg=$(/usr/bin/psql -XAtc 'SELECT * FROM jobq_stats()' 2>&1)
case $msg in
*'could not access file "$libdir/jobq"'*) ok "a jobq function fails clearly without the library" ;;
*) notok "a jobq function fails clearly without the library" "$msg" ;;
esac
check "DROP EXTENSION jobq works" psql -c 'DROP EXTENSION jobq'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
