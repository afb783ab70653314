# Shared by Tools/test, Tools/demo and Tools/bench: install what is missing and run a private
# PostgreSQL cluster. Sourced, not executed.

# Installs the Debian packages that are not there yet. --no-upgrade: a PostgreSQL that is already
# installed must never be upgraded in place under a running cluster. Leading --options go to
# apt-get install (e.g. --no-install-recommends).
pl_ensure_packages() {
  local options=() missing=() p
  while [ $# -gt 0 ] && [ "${1#--}" != "$1" ]; do options+=("$1"); shift; done
  for p in "$@"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-upgrade ${options[@]+"${options[@]}"} "${missing[@]}" >/dev/null
  fi
  if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH="$PATH:/opt/swift/usr/bin"
  fi
}

# The newest server binaries Debian installed (postgresql-NN).
pl_pg_bindir() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$d" ] || { echo "no PostgreSQL server binaries under /usr/lib/postgresql" >&2; return 1; }
  echo "$d"
}

# Runs a command as the cluster's owner: initdb and postgres refuse to run as root.
pl_as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# Starts a throwaway cluster in a new mktemp folder. It listens on a Unix socket in that folder
# only (no TCP), so it never clashes with another server. Sets PL_PGDIR, PL_PGBIN, PL_PGDATA,
# PL_PGSOCK and DATABASE_URL. Extra server settings may be passed as "-c name=value" words.
pl_start_cluster() {
  PL_PGBIN=$(pl_pg_bindir)
  PL_PGDIR=$(mktemp -d /tmp/purchase-ledger-pg.XXXXXX)
  PL_PGDATA="$PL_PGDIR/data"
  PL_PGSOCK="$PL_PGDIR"
  chmod 755 "$PL_PGDIR"
  [ "$(id -u)" = 0 ] && chown postgres: "$PL_PGDIR"
  pl_as_owner "$PL_PGBIN/initdb" -D "$PL_PGDATA" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >"$PL_PGDIR/initdb.log" 2>&1 \
    || { cat "$PL_PGDIR/initdb.log" >&2; return 1; }
  pl_as_owner "$PL_PGBIN/pg_ctl" -D "$PL_PGDATA" -l "$PL_PGDIR/server.log" -w -t 60 \
    -o "-k $PL_PGSOCK -c listen_addresses= -c max_connections=200 $*" start >/dev/null \
    || { cat "$PL_PGDIR/server.log" >&2; return 1; }
  export DATABASE_URL="host=$PL_PGSOCK port=5432 user=postgres dbname=postgres"
  export PL_PGDIR PL_PGBIN PL_PGDATA PL_PGSOCK
}

# Stops the cluster and removes its folder; safe to call twice and from a trap.
pl_stop_cluster() {
  if [ -n "${PL_PGDATA:-}" ] && [ -d "$PL_PGDATA" ]; then
    pl_as_owner "$PL_PGBIN/pg_ctl" -D "$PL_PGDATA" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  if [ -n "${PL_PGDIR:-}" ]; then rm -rf "$PL_PGDIR"; fi
  PL_PGDIR= PL_PGDATA=
}
