#!/usr/bin/env bash
# test/install-deps.sh: install what building and testing jobq needs on
# Debian 12 with PostgreSQL 15 (run as root; a no-op when all is there).
set -euo pipefail
pkgs=(postgresql-15 postgresql-server-dev-15 libpq-dev postgresql-client-15
      build-essential libipc-run-perl valgrind pgbouncer faketime python3
      man-db groff-base python3-psycopg2
      dpkg-dev debhelper lintian postgresql-server-dev-all pkg-config
      libcurl4-openssl-dev libssl-dev libmicrohttpd-dev curl chromium)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# node and npm for examples/node: Debian's only when the machine has none
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
# examples/node's pinned node-postgres, from its package-lock.json
node_dir=$(cd "$(dirname "$0")/.." && pwd)/examples/node
if [ ! -d "$node_dir/node_modules/pg" ]; then
	(cd "$node_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
fi
# jobq-web's browser test: the pinned playwright-core of client/web/test
# (never its browser download: t/089 drives Debian's chromium)
web_test_dir=$(cd "$(dirname "$0")/.." && pwd)/client/web/test
if [ ! -d "$web_test_dir/node_modules/playwright-core" ]; then
	(cd "$web_test_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
fi
# pg_config from the PostgreSQL 15 packages, whatever else is installed
command -v pg_config >/dev/null || { echo "pg_config not found" >&2; exit 1; }
echo "dependencies present: ${pkgs[*]} node npm examples/node/node_modules client/web/test/node_modules"
