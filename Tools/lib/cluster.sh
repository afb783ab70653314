# A throwaway high-availability PostgreSQL 15 cluster for failover tests and demos: a
# pg_auto_failover monitor and two data nodes (node1, node2) with synchronous replication, all
# on 127.0.0.1 in one mktemp folder, run as the `postgres` user. Sourced, not executed; needs
# Tools/lib/postgres.sh sourced first (pl_ensure_packages, pl_pg_bindir, pl_as_owner); sources
# Tools/lib/ports.sh (the set's ports are in PL_PORTS_CLUSTER, 20000-29999).
#
# Loopback test use only: every node trusts every connection from 127.0.0.0/8 (--auth trust)
# and nothing is encrypted (--no-ssl, sslmode=disable).
#
# Layout of $PL_CLUSTER_DIR (a short /tmp path: Unix socket paths are limited to 107 bytes):
#   monitor/ node1/ node2/          PGDATA of each instance (Postgres logs in PGDATA/log/)
#   monitor.log node1.log node2.log each `pg_autoctl run` keeper's log (create-*.log: creation)
#   config/ share/ run/             pg_autoctl's XDG folders: config, state, pid files
#   .s.PGSQL.<port>                 the Unix sockets of all three instances
#   cluster.env                     the variables below, to be sourced
#   ports                           the three ports, written as soon as chosen: a set started
#                                   later avoids them, also while a node of this one is down
#   *.pgid                          process group of each keeper (keeper + its postgres)
#   pgbackrest.conf repo/ log/ lock/ spool/
#                                   with Tools/cluster up --backup only: the pgBackRest
#                                   repository both nodes archive to (Tools/lib/backup.sh)
#
# Variables (exported by pl_cluster_up and written to cluster.env):
#   DATABASE_URL, DATABASE_READ_URL (multi-host libpq URLs), PL_CLUSTER_DIR,
#   PL_CLUSTER_MONITOR_URI, PL_CLUSTER_MONITOR_PGDATA, PL_CLUSTER_MONITOR_PORT,
#   PL_CLUSTER_NODE1_PGDATA, PL_CLUSTER_NODE1_PORT, PL_CLUSTER_NODE1_PIDFILE, and NODE2 likewise;
#   with --backup, PL_CLUSTER_BACKUP_CONFIG (added to cluster.env by Tools/cluster).

# shellcheck source=Tools/lib/ports.sh
. "$(dirname "${BASH_SOURCE[0]}")/ports.sh"

PL_CLUSTER_STATE_FILE=/tmp/purchase-ledger-cluster.current
# Seconds the waits below allow by default (PL_CLUSTER_TIMEOUT overrides).
PL_CLUSTER_TIMEOUT=${PL_CLUSTER_TIMEOUT:-120}

# Failover tuned for tests (the monitor's defaults in brackets). A primary whose keeper stops
# reporting is failed over once the monitor's health checks fail and it has not reported for
# node_considered_unhealthy_timeout; the standby is then promoted but held back from taking
# writes for primary_demote_timeout, the time the old primary is given to demote itself
# (the keepers' timeout.network_partition_timeout, below, stays shorter than that).
PL_CLUSTER_MONITOR_SETTINGS=(
  "pgautofailover.health_check_period=1000"              # [5000 ms] between two checks
  "pgautofailover.health_check_timeout=1000"             # [5000 ms] connect timeout of a check
  "pgautofailover.health_check_max_retries=1"            # [2] failed retries before "bad"
  "pgautofailover.health_check_retry_delay=500"          # [2000 ms]
  "pgautofailover.node_considered_unhealthy_timeout=3000" # [20000 ms] no report for that long
  "pgautofailover.primary_demote_timeout=4000"           # [30000 ms]
)
# pg_autoctl config set on each data node (seconds; defaults in brackets).
PL_CLUSTER_KEEPER_SETTINGS=(
  "timeout.network_partition_timeout=3" # [20] a primary alone (no monitor, no standby) demotes
)
# Appended to each instance's postgresql.conf, after pg_auto_failover's include: its automatic
# tuning gives every instance a quarter of the machine's RAM as shared_buffers.
PL_CLUSTER_PG_SETTINGS=(
  "shared_buffers=128MB"
  "max_connections=200"
)

_pl_cluster_die() { echo "cluster: $*" >&2; return 1; }

_pl_cluster_now() { date +%s.%N; }
_pl_cluster_since() { awk -v a="$1" -v b="$(_pl_cluster_now)" 'BEGIN { printf "%.1f", b - a }'; }

# Runs pg_autoctl as the owner with a clean environment that keeps all of its files (config,
# state, pid files, sockets) inside the cluster folder. PG_REGRESS_SOCK_DIR makes pg_autoctl
# start postgres with `-k <folder>` (Unix sockets there, not in /var/run/postgresql).
_pl_cluster_env() {
  local dir=$PL_CLUSTER_DIR
  echo env -i PATH="$PL_CLUSTER_PGBIN:/usr/bin:/bin" HOME="$dir" LANG=C.UTF-8 LC_ALL=C.UTF-8 \
    XDG_CONFIG_HOME="$dir/config" XDG_DATA_HOME="$dir/share" XDG_RUNTIME_DIR="$dir/run" \
    PG_REGRESS_SOCK_DIR="$dir" PGHOST="$dir"
}
_pl_cluster_autoctl() {
  local envcmd
  read -r -a envcmd <<<"$(_pl_cluster_env)"
  (cd "$PL_CLUSTER_DIR" && pl_as_owner "${envcmd[@]}" pg_autoctl "$@")
}

# Queries the monitor's own database over its Unix socket.
_pl_cluster_monitor_sql() {
  psql -X -qAt -v ON_ERROR_STOP=1 -F ' ' \
    "host=$PL_CLUSTER_DIR port=$PL_CLUSTER_MONITOR_PORT user=postgres dbname=pg_auto_failover" -c "$1"
}

# Queries a data node (node1 or node2) over its Unix socket.
_pl_cluster_node_sql() {
  local port
  port=$(_pl_cluster_node_var "$1" PORT)
  psql -X -qAt -v ON_ERROR_STOP=1 -F ' ' \
    "host=$PL_CLUSTER_DIR port=$port user=postgres dbname=postgres connect_timeout=2" -c "$2"
}

_pl_cluster_node_var() { # node1|node2 PORT|PGDATA|PIDFILE
  local n
  n="PL_CLUSTER_$(echo "$1" | tr '[:lower:]' '[:upper:]')_$2"
  echo "${!n}"
}

# COUNT distinct TCP ports of the set's range (PL_PORTS_CLUSTER) nobody listens on at
# 127.0.0.1, none of them another set's on this machine: a set whose primary a failover test
# killed listens on nothing until it rejoins, and its port must still be free then.
_pl_cluster_free_ports() { # count
  local others
  # shellcheck disable=SC2086 # the range is two words
  pl_ports_check_range $PL_PORTS_CLUSTER "the failover set" || return 1
  others=$(cat /tmp/plc.*/ports 2>/dev/null | tr '\n' ' ' || true)
  # shellcheck disable=SC2086
  pl_free_ports $PL_PORTS_CLUSTER "$1" $others
}

# Closes every descriptor above 2 of this (sub)shell, before it execs a daemon: a keeper outlives
# whoever started it, and one that inherited a test process's sockets (they are not
# close-on-exec) kept a test server's listening socket open after the server had closed it.
_pl_close_inherited_fds() {
  local fd
  for fd in /proc/$BASHPID/fd/*; do
    fd=${fd##*/}
    if [ "$fd" -gt 2 ]; then exec {fd}>&-; fi
  done
}

# Starts `pg_autoctl run` for one instance in the background, in a session of its own so that
# the keeper and all its postgres processes share one process group (the .pgid file).
_pl_cluster_run_keeper() { # name (monitor|node1|node2)
  local name=$1 dir=$PL_CLUSTER_DIR envcmd owner=()
  read -r -a envcmd <<<"$(_pl_cluster_env)"
  if [ "$(id -u)" = 0 ]; then owner=(runuser -u postgres --); fi
  (cd "$dir" && _pl_close_inherited_fds && exec setsid nohup ${owner[@]+"${owner[@]}"} "${envcmd[@]}" \
    pg_autoctl run --pgdata "$dir/$name" >>"$dir/$name.log" 2>&1 </dev/null) &
  # setsid execs in place (a background job is not a group leader): $! leads the new group.
  echo "$!" >"$dir/$name.pgid"
}

# Whether the process group in <name>.pgid still has a process that belongs to this cluster.
_pl_cluster_group_alive() {
  local f="$PL_CLUSTER_DIR/$1.pgid" g
  [ -s "$f" ] || return 1
  g=$(cat "$f")
  pgrep -g "$g" -f "$PL_CLUSTER_DIR/" >/dev/null 2>&1
}

_pl_cluster_kill_group() { # name signal
  local f="$PL_CLUSTER_DIR/$1.pgid"
  _pl_cluster_group_alive "$1" || return 0
  kill "-$2" -- "-$(cat "$f")" 2>/dev/null || true
}

# SIGKILLs the postmaster of <name> (if PGDATA/postmaster.pid names a live postgres of that
# PGDATA) and its children: each postgres child runs in a session of its own, out of the
# keeper's process group, and an orphan still attached to the shared memory would keep a new
# postmaster from starting.
_pl_cluster_kill_postmaster() { # name
  local pgdata="$PL_CLUSTER_DIR/$1" pid children=()
  [ -s "$pgdata/postmaster.pid" ] || return 0
  pid=$(head -n 1 "$pgdata/postmaster.pid")
  [ -n "$pid" ] && ps -o args= -p "$pid" 2>/dev/null | grep -qF -- "-D $pgdata" || return 0
  mapfile -t children < <(pgrep -P "$pid" || true)
  kill -KILL "$pid" ${children[@]+"${children[@]}"} 2>/dev/null || true
}

# Waits until the command succeeds, at most $1 seconds; prints nothing.
_pl_cluster_wait_for() { # seconds what command...
  local seconds=$1 what=$2 deadline
  deadline=$(( $(date +%s) + seconds ))
  shift 2
  until "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "cluster: timed out after $seconds s waiting for $what" >&2
      return 1
    fi
    sleep 0.2
  done
}

# "name reportedstate goalstate" per data node, from the monitor.
pl_cluster_states() {
  _pl_cluster_monitor_sql "SELECT nodename, reportedstate, goalstate FROM pgautofailover.node ORDER BY nodeid"
}

# Name of the node the monitor has as primary (reported and assigned primary, wait_primary or
# single); fails when there is none.
pl_cluster_primary() {
  local line
  line=$(_pl_cluster_monitor_sql "SELECT nodename FROM pgautofailover.node
    WHERE reportedstate IN ('primary','wait_primary','single') AND goalstate = reportedstate
    ORDER BY nodeid LIMIT 1") || return 1
  [ -n "$line" ] || return 1
  echo "$line"
}

_pl_cluster_has_state() { # name state...
  local node=$1 s states
  shift
  states=$(_pl_cluster_monitor_sql "SELECT reportedstate || ' ' || goalstate FROM pgautofailover.node
    WHERE nodename = '$node'") || return 1
  for s in "$@"; do [ "$states" = "$s $s" ] && return 0; done
  return 1
}

_pl_cluster_healthy_pair() {
  _pl_cluster_has_state "$1" primary && _pl_cluster_has_state "$2" secondary
}

_pl_cluster_sync_standby() { # primary
  local r
  r=$(_pl_cluster_node_sql "$1" "SELECT count(*) FROM pg_stat_replication
    WHERE sync_state IN ('sync','quorum') AND state = 'streaming'") || return 1
  [ "$r" -ge 1 ]
}

# Loads the variables of a running cluster (its cluster.env) into this shell, so that the
# functions below work on it: the folder comes from $1, else $PL_CLUSTER_DIR.
pl_cluster_load() {
  local dir=${1:-${PL_CLUSTER_DIR:-}}
  [ -n "$dir" ] || _pl_cluster_die "no cluster: give its folder or set PL_CLUSTER_DIR" || return 1
  [ -s "$dir/cluster.env" ] || _pl_cluster_die "$dir/cluster.env not found (no cluster there)" || return 1
  # shellcheck disable=SC1091
  . "$dir/cluster.env"
  PL_CLUSTER_PGBIN=$(pl_pg_bindir)
}

# Creates and starts the cluster in a new folder; exports the variables and writes cluster.env.
# Extra "name=value" arguments are added to the data nodes' postgresql.conf.
pl_cluster_up() {
  local t0 pm p1 p2 ports setting v
  t0=$(_pl_cluster_now)
  pl_ensure_packages --no-install-recommends postgresql postgresql-15-auto-failover
  command -v pg_autoctl >/dev/null || _pl_cluster_die "pg_autoctl not found after install" || return 1
  PL_CLUSTER_PGBIN=$(pl_pg_bindir)
  [ -f "$PL_CLUSTER_PGBIN/../lib/pgautofailover.so" ] \
    || _pl_cluster_die "pgautofailover.so missing for $PL_CLUSTER_PGBIN (need postgresql-15-auto-failover)" || return 1
  echo "cluster: packages ready in $(_pl_cluster_since "$t0") s" >&2

  PL_CLUSTER_DIR=$(mktemp -d /tmp/plc.XXXXXX)
  export PL_CLUSTER_DIR
  mkdir -p "$PL_CLUSTER_DIR/config" "$PL_CLUSTER_DIR/share" "$PL_CLUSTER_DIR/run"
  chmod 755 "$PL_CLUSTER_DIR"
  if [ "$(id -u)" = 0 ]; then chown -R postgres: "$PL_CLUSTER_DIR"; fi
  ports=$(_pl_cluster_free_ports 3) || return 1
  read -r pm p1 p2 <<<"$ports"
  echo "$pm $p1 $p2" >"$PL_CLUSTER_DIR/ports"
  PL_CLUSTER_MONITOR_PORT=$pm PL_CLUSTER_NODE1_PORT=$p1 PL_CLUSTER_NODE2_PORT=$p2
  PL_CLUSTER_MONITOR_PGDATA=$PL_CLUSTER_DIR/monitor
  PL_CLUSTER_NODE1_PGDATA=$PL_CLUSTER_DIR/node1 PL_CLUSTER_NODE2_PGDATA=$PL_CLUSTER_DIR/node2
  echo "cluster: folder $PL_CLUSTER_DIR, monitor port $pm, node1 port $p1, node2 port $p2" >&2
  # Tools/cluster up --backup: the pgBackRest configuration the nodes' archive_command names
  # (Tools/lib/backup.sh), there before node1 archives its first segment.
  if [ -n "${PL_CLUSTER_BACKUP:-}" ]; then pl_cluster_backup_config || return 1; fi

  # The monitor.
  _pl_cluster_autoctl create monitor --pgdata "$PL_CLUSTER_MONITOR_PGDATA" --pgport "$pm" \
    --hostname 127.0.0.1 --listen 127.0.0.1 --auth trust --no-ssl --ssl-mode disable \
    --pgctl "$PL_CLUSTER_PGBIN/pg_ctl" >"$PL_CLUSTER_DIR/create-monitor.log" 2>&1 \
    || { tail -n 30 "$PL_CLUSTER_DIR/create-monitor.log" >&2; _pl_cluster_die "creating the monitor failed (log: $PL_CLUSTER_DIR/create-monitor.log)"; return 1; }
  printf '\n# Added by Tools/lib/cluster.sh\nshared_buffers = 128MB\n' >>"$PL_CLUSTER_MONITOR_PGDATA/postgresql.conf"
  _pl_cluster_run_keeper monitor
  _pl_cluster_wait_for "$PL_CLUSTER_TIMEOUT" "the monitor to accept connections" \
    _pl_cluster_monitor_sql "SELECT 1 FROM pgautofailover.formation" \
    || { tail -n 30 "$PL_CLUSTER_DIR/monitor.log" >&2; return 1; }
  for setting in "${PL_CLUSTER_MONITOR_SETTINGS[@]}"; do
    _pl_cluster_monitor_sql "ALTER SYSTEM SET ${setting%%=*} = '${setting#*=}'" || return 1
  done
  _pl_cluster_monitor_sql "SELECT pg_reload_conf()" >/dev/null || return 1
  # What `pg_autoctl show uri --formation monitor` prints.
  PL_CLUSTER_MONITOR_URI="postgres://autoctl_node@127.0.0.1:$pm/pg_auto_failover?sslmode=disable"
  echo "cluster: monitor up at $(_pl_cluster_since "$t0") s: $PL_CLUSTER_MONITOR_URI" >&2

  # node1 first (it becomes the primary: "single" until a standby joins), then node2, created
  # from node1 by pg_basebackup while node1's keeper runs.
  _pl_cluster_create_node node1 "$p1" "$@" || return 1
  _pl_cluster_wait_for "$PL_CLUSTER_TIMEOUT" "node1 to be single" _pl_cluster_has_state node1 single \
    || { tail -n 30 "$PL_CLUSTER_DIR/node1.log" >&2; return 1; }
  echo "cluster: node1 single at $(_pl_cluster_since "$t0") s" >&2
  _pl_cluster_create_node node2 "$p2" || return 1
  _pl_cluster_wait_for "$PL_CLUSTER_TIMEOUT" "node1 primary and node2 secondary" _pl_cluster_healthy_pair node1 node2 \
    || { pl_cluster_states >&2; tail -n 30 "$PL_CLUSTER_DIR/node2.log" >&2; return 1; }
  _pl_cluster_wait_for "$PL_CLUSTER_TIMEOUT" "synchronous replication from node1 to node2" _pl_cluster_sync_standby node1 \
    || { _pl_cluster_node_sql node1 "SELECT application_name, state, sync_state FROM pg_stat_replication" >&2; return 1; }
  echo "cluster: node1 primary, node2 secondary (synchronous) at $(_pl_cluster_since "$t0") s" >&2

  PL_CLUSTER_NODE1_PIDFILE=$PL_CLUSTER_DIR/run/pg_autoctl$PL_CLUSTER_NODE1_PGDATA/pg_autoctl.pid
  PL_CLUSTER_NODE2_PIDFILE=$PL_CLUSTER_DIR/run/pg_autoctl$PL_CLUSTER_NODE2_PGDATA/pg_autoctl.pid
  PL_CLUSTER_MONITOR_PIDFILE=$PL_CLUSTER_DIR/run/pg_autoctl$PL_CLUSTER_MONITOR_PGDATA/pg_autoctl.pid
  DATABASE_URL="host=127.0.0.1,127.0.0.1 port=$p1,$p2 user=postgres dbname=postgres target_session_attrs=read-write connect_timeout=2"
  DATABASE_READ_URL="host=127.0.0.1,127.0.0.1 port=$p1,$p2 user=postgres dbname=postgres target_session_attrs=prefer-standby connect_timeout=2"
  export DATABASE_URL DATABASE_READ_URL PL_CLUSTER_MONITOR_URI PL_CLUSTER_MONITOR_PGDATA \
    PL_CLUSTER_MONITOR_PORT PL_CLUSTER_MONITOR_PIDFILE PL_CLUSTER_NODE1_PGDATA PL_CLUSTER_NODE1_PORT \
    PL_CLUSTER_NODE1_PIDFILE PL_CLUSTER_NODE2_PGDATA PL_CLUSTER_NODE2_PORT PL_CLUSTER_NODE2_PIDFILE
  for v in DATABASE_URL DATABASE_READ_URL PL_CLUSTER_DIR PL_CLUSTER_MONITOR_URI PL_CLUSTER_MONITOR_PGDATA \
    PL_CLUSTER_MONITOR_PORT PL_CLUSTER_MONITOR_PIDFILE PL_CLUSTER_NODE1_PGDATA PL_CLUSTER_NODE1_PORT \
    PL_CLUSTER_NODE1_PIDFILE PL_CLUSTER_NODE2_PGDATA PL_CLUSTER_NODE2_PORT PL_CLUSTER_NODE2_PIDFILE; do
    printf "export %s='%s'\n" "$v" "${!v}"
  done >"$PL_CLUSTER_DIR/cluster.env"
  echo "cluster: up in $(_pl_cluster_since "$t0") s" >&2
}

_pl_cluster_create_node() { # name port [name=value...]
  local name=$1 port=$2 pgdata="$PL_CLUSTER_DIR/$1" setting
  shift 2
  _pl_cluster_autoctl create postgres --pgdata "$pgdata" --pgport "$port" --pghost "$PL_CLUSTER_DIR" \
    --listen 127.0.0.1 --hostname 127.0.0.1 --name "$name" --monitor "$PL_CLUSTER_MONITOR_URI" \
    --username postgres --dbname postgres --auth trust --no-ssl --ssl-mode disable \
    --pgctl "$PL_CLUSTER_PGBIN/pg_ctl" >"$PL_CLUSTER_DIR/create-$name.log" 2>&1 \
    || { tail -n 30 "$PL_CLUSTER_DIR/create-$name.log" >&2; _pl_cluster_die "creating $name failed (log: $PL_CLUSTER_DIR/create-$name.log)"; return 1; }
  for setting in "${PL_CLUSTER_KEEPER_SETTINGS[@]}"; do
    _pl_cluster_autoctl config set --pgdata "$pgdata" "${setting%%=*}" "${setting#*=}" >/dev/null \
      || _pl_cluster_die "pg_autoctl config set $setting failed on $name" || return 1
  done
  # node2's postgresql.conf is node1's, copied by pg_basebackup.
  if [ "$name" = node1 ]; then
    {
      printf '\n# Added by Tools/lib/cluster.sh\n'
      for setting in "${PL_CLUSTER_PG_SETTINGS[@]}" "$@"; do
        printf "%s = '%s'\n" "${setting%%=*}" "${setting#*=}"
      done
    } >>"$pgdata/postgresql.conf"
  fi
  _pl_cluster_run_keeper "$name"
}

# Stops every keeper and postgres of the cluster and removes its folder. The folder comes from
# $1, else $PL_CLUSTER_DIR (never from the state file: a test's trap must not stop the cluster
# a developer started). Safe to call twice and from a trap, also after a failed pl_cluster_up.
pl_cluster_down() {
  local dir=${1:-${PL_CLUSTER_DIR:-}} name pid pids=() deadline
  [ -n "$dir" ] || return 0
  case $dir in /tmp/plc.*) ;; *) _pl_cluster_die "refusing to remove $dir (not a /tmp/plc.* cluster folder)"; return 1 ;; esac
  if [ -d "$dir" ]; then
    PL_CLUSTER_DIR=$dir
    PL_CLUSTER_PGBIN=$(pl_pg_bindir)
    # Ask every keeper to stop (fast shutdown of its postgres), the monitor last.
    for name in node1 node2 monitor; do
      if [ -d "$dir/$name" ] && _pl_cluster_group_alive "$name"; then
        _pl_cluster_autoctl stop --pgdata "$dir/$name" >>"$dir/stop.log" 2>&1 &
        pids+=($!)
      fi
    done
    for pid in ${pids[@]+"${pids[@]}"}; do wait "$pid" || true; done
    deadline=$(( $(date +%s) + 20 ))
    while [ "$(date +%s)" -lt "$deadline" ]; do
      _pl_cluster_group_alive node1 || _pl_cluster_group_alive node2 || _pl_cluster_group_alive monitor || break
      sleep 0.2
    done
    # Whatever is left: the keepers' process groups, then any postmaster still in a PGDATA.
    for name in node1 node2 monitor; do
      _pl_cluster_kill_postmaster "$name"
      _pl_cluster_kill_group "$name" KILL
    done
    deadline=$(( $(date +%s) + 10 ))
    while pgrep -f "$dir/" >/dev/null 2>&1 && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.2; done
    rm -rf "$dir"
    echo "cluster: stopped and removed $dir" >&2
  fi
  if [ -s "$PL_CLUSTER_STATE_FILE" ] && [ "$(cat "$PL_CLUSTER_STATE_FILE")" = "$dir" ]; then
    rm -f "$PL_CLUSTER_STATE_FILE"
  fi
  if [ "${PL_CLUSTER_DIR:-}" = "$dir" ]; then PL_CLUSTER_DIR=; fi
  return 0
}

# Prints the postmaster PID of the current primary.
pl_cluster_primary_pid() {
  local node pgdata
  node=$(pl_cluster_primary) || _pl_cluster_die "the monitor reports no primary" || return 1
  pgdata=$(_pl_cluster_node_var "$node" PGDATA)
  [ -s "$pgdata/postmaster.pid" ] || _pl_cluster_die "$pgdata/postmaster.pid not found" || return 1
  head -n 1 "$pgdata/postmaster.pid"
}

# Kills the current primary and prints its name. By default the whole node dies (SIGKILL to its
# postmaster, the postmaster's children and its keeper's process group), as when a host fails:
# the monitor fails over once its health checks fail (about 7-8 s to the first write here).
# With --postgres-only only the postmaster gets SIGKILL and the outcome is a race: the keeper
# restarts postgres within a second or so, but if it has reported "postgres not running" to the
# monitor first, the monitor fails over anyway (seen in 2 runs of 3); a test that needs a
# failover must kill the whole node.
pl_cluster_kill_primary() {
  local node pid
  node=$(pl_cluster_primary) || _pl_cluster_die "the monitor reports no primary" || return 1
  if [ "${1:-}" = --postgres-only ]; then
    pid=$(pl_cluster_primary_pid) || return 1
    kill -KILL "$pid"
  else
    _pl_cluster_group_alive "$node" || _pl_cluster_die "the keeper of $node is not running" || return 1
    # The postmaster and its children first (they are found through it), then the keeper.
    _pl_cluster_kill_postmaster "$node"
    _pl_cluster_kill_group "$node" KILL
  fi
  echo "$node"
}

# Waits until the monitor has a primary other than $1 (the node that was killed) that accepts
# writes: reported wait_primary or primary. Prints the new primary and the seconds taken.
pl_cluster_wait_primary() { # old-primary [seconds]
  local old=$1 timeout=${2:-$PL_CLUSTER_TIMEOUT} t0 other
  t0=$(_pl_cluster_now)
  if [ "$old" = node1 ]; then other=node2; else other=node1; fi
  _pl_cluster_wait_for "$timeout" "$other to become primary" \
    _pl_cluster_has_state "$other" wait_primary primary || { pl_cluster_states >&2; return 1; }
  echo "$other $(_pl_cluster_since "$t0")"
}

# Starts the keeper of $1 (a node whose keeper was killed) again and waits until the monitor
# has it back as secondary (pg_rewind, if needed, is pg_autoctl's) and its peer as primary.
# Prints the seconds taken.
pl_cluster_wait_secondary() { # node [seconds]
  local node=$1 timeout=${2:-$PL_CLUSTER_TIMEOUT} t0 other
  t0=$(_pl_cluster_now)
  if [ "$node" = node1 ]; then other=node2; else other=node1; fi
  _pl_cluster_group_alive "$node" || _pl_cluster_run_keeper "$node"
  _pl_cluster_wait_for "$timeout" "$node to rejoin as secondary" _pl_cluster_healthy_pair "$other" "$node" \
    || { pl_cluster_states >&2; tail -n 30 "$PL_CLUSTER_DIR/$node.log" >&2; return 1; }
  _pl_cluster_since "$t0"
  echo
}

# Restarts the keeper of a node (after pl_cluster_kill_primary) without waiting.
pl_cluster_restart_node() {
  _pl_cluster_group_alive "$1" || _pl_cluster_run_keeper "$1"
}
