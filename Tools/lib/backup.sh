# A throwaway PostgreSQL 15 with continuous WAL archiving to a pgBackRest repository on this
# machine, for tests and benchmarks of backups and point-in-time restore (Tools/backup); and the
# same repository for the failover set (Tools/cluster up --backup). Sourced, not executed;
# needs Tools/lib/postgres.sh sourced first (pl_ensure_packages, pl_pg_bindir, pl_as_owner).
#
# Layout of $PL_BACKUP_DIR (a short /tmp path: Unix socket paths are limited to 107 bytes):
#   data/             PGDATA; its postgresql.conf holds the archiving settings, so a restore
#                     brings them back with the rest
#   .s.PGSQL.5432     the server's only socket (listen_addresses is empty: no TCP, so it never
#                     clashes with another server, whatever the port)
#   server.log        the server's log, outside PGDATA so that it outlives `lose`
#   pgbackrest.conf   the stanza `ledger` (written by pl_backup_write_config)
#   repo/             the repository (repo1-path): it outlives `lose`, as a repository on
#                     another machine would
#   log/ lock/ spool/ pgBackRest's logs (one per stanza and command), locks and spool. The lock
#                     folder is the set's own: with the default, /tmp/pgbackrest, two sets with
#                     the same stanza name would wait on each other's locks
#   backup.env        the export lines, to be sourced
#
# pgBackRest runs as `postgres`, the owner of PGDATA and of the repository, as archive-push
# does. It logs nothing to standard output (log-level-console=off), so that what the tools print
# there stays export lines, and its warnings and errors to standard error, as it words them.
#
# Variables (exported by pl_backup_up and written to backup.env):
#   DATABASE_URL, PL_BACKUP_DIR, PL_BACKUP_PGDATA, PL_BACKUP_CONFIG, PL_BACKUP_STANZA.

PL_BACKUP_STATE_FILE=/tmp/purchase-ledger-backup.current
PL_BACKUP_STANZA=ledger
PL_BACKUP_PORT=5432
# Seconds a restore's recovery may take, and the other waits (PL_BACKUP_TIMEOUT overrides).
PL_BACKUP_TIMEOUT=${PL_BACKUP_TIMEOUT:-300}

_pl_backup_die() { echo "backup: $*" >&2; return 1; }
_pl_backup_now() { date +%s.%N; }
_pl_backup_since() { awk -v a="$1" -v b="$(_pl_backup_now)" 'BEGIN { printf "%.1f", b - a }'; }

# Writes <dir>/pgbackrest.conf: the repository in <dir>/repo and the stanza `ledger`, whose
# pg1-* lines are the arguments ("pg1-path=...", ...). Shared by Tools/backup and
# Tools/cluster up --backup.
pl_backup_write_config() { # dir pg-option...
  local dir=$1 line
  shift
  mkdir -p "$dir/repo" "$dir/log" "$dir/lock" "$dir/spool"
  {
    echo "# Written by Tools/lib/backup.sh for a throwaway set; see packaging/pgbackrest.conf.example"
    echo "# for a real one."
    echo "[global]"
    echo "repo1-path=$dir/repo"
    echo "repo1-retention-full=2"
    # A backup starts with an immediate checkpoint instead of waiting for the next one.
    echo "start-fast=y"
    # lz4: fast, and small enough for a repository that lives minutes.
    echo "compress-type=lz4"
    echo "log-path=$dir/log"
    echo "lock-path=$dir/lock"
    echo "spool-path=$dir/spool"
    echo "log-level-console=off"
    echo "log-level-stderr=warn"
    echo "log-level-file=info"
    echo
    echo "[$PL_BACKUP_STANZA]"
    for line in "$@"; do echo "$line"; done
  } >"$dir/pgbackrest.conf"
  if [ "$(id -u)" = 0 ]; then
    chown -R postgres: "$dir/pgbackrest.conf" "$dir/repo" "$dir/log" "$dir/lock" "$dir/spool"
  fi
}

# Runs pgBackRest on the set in <dir> as the owner. Its errors reach standard error unchanged.
pl_backup_pgbackrest() { # dir command [option...]
  local dir=$1
  shift
  pl_as_owner pgbackrest --config="$dir/pgbackrest.conf" --stanza="$PL_BACKUP_STANZA" "$@"
}

# Prints the export lines of the last backup in the repository of <dir>:
#   PL_BACKUP_LABEL    its label (20250101-120000F, ..._20250101-120500I)
#   PL_BACKUP_TYPE     full, incr or diff
#   PL_BACKUP_SIZE     bytes of the database it covers
#   PL_BACKUP_DELTA    bytes it copied (all of them for a full backup)
#   PL_BACKUP_REPO_SIZE bytes it added to the repository, compressed
#   PL_BACKUP_START, PL_BACKUP_STOP  when it started and ended ('YYYY-MM-DD HH:MM:SS+00'): a
#                      point-in-time target must be at least a second after a backup's STOP
#   PL_BACKUP_SECONDS  how long the command took (when given)
pl_backup_last() { # dir [seconds]
  local dir=$1 seconds=${2:-} json
  json=$(pl_backup_pgbackrest "$dir" info --output=json) || return 1
  jq -r --arg seconds "$seconds" '
    def q: "'"'"'" + tostring + "'"'"'";
    def utc: strftime("%Y-%m-%d %H:%M:%S+00");
    (.[0].backup // []) | last
    | if . == null then error("no backup in the repository") else . end
    | "export PL_BACKUP_LABEL=\(.label | q)",
      "export PL_BACKUP_TYPE=\(.type | q)",
      "export PL_BACKUP_SIZE=\(.info.size | q)",
      "export PL_BACKUP_DELTA=\(.info.delta | q)",
      "export PL_BACKUP_REPO_SIZE=\(.info.repository.delta | q)",
      "export PL_BACKUP_START=\(.timestamp.start | utc | q)",
      "export PL_BACKUP_STOP=\(.timestamp.stop | utc | q)",
      (if $seconds != "" then "export PL_BACKUP_SECONDS=\($seconds | q)" else empty end)
  ' <<<"$json"
}

# Takes a backup (full, incr or diff) of the set in <dir> and prints pl_backup_last's lines.
# Extra options go to `pgbackrest backup` (Tools/cluster passes the primary's --pg1-path).
pl_backup_take() { # dir type [option...]
  local dir=$1 type=$2 t0 seconds
  shift 2
  case $type in full | incr | diff) ;; *) _pl_backup_die "unknown backup type '$type' (full, incr or diff)"; return 1 ;; esac
  t0=$(_pl_backup_now)
  pl_backup_pgbackrest "$dir" backup --type="$type" "$@" \
    || _pl_backup_die "pgbackrest backup --type=$type failed (its message is above; log: $dir/log/$PL_BACKUP_STANZA-backup.log)" || return 1
  seconds=$(_pl_backup_since "$t0")
  pl_backup_last "$dir" "$seconds" || return 1
}

# --- The standalone set (Tools/backup) ----------------------------------------------------------

# Loads the variables of the set in <dir> (its backup.env) into this shell.
pl_backup_load() { # dir
  local dir=$1
  [ -n "$dir" ] || _pl_backup_die "no backup set: give its folder or set PL_BACKUP_DIR" || return 1
  [ -s "$dir/backup.env" ] || _pl_backup_die "$dir/backup.env not found (no backup set there)" || return 1
  # shellcheck disable=SC1091
  . "$dir/backup.env"
  PL_BACKUP_PGBIN=$(pl_pg_bindir)
}

_pl_backup_sql() { # sql
  psql -X -qAt -v ON_ERROR_STOP=1 "$DATABASE_URL connect_timeout=2" -c "$1"
}

# Whether a postmaster runs on PGDATA (pg_ctl status: 0 running, 3 not, 4 no PGDATA).
_pl_backup_running() {
  [ -d "$PL_BACKUP_PGDATA" ] && pl_as_owner "$PL_BACKUP_PGBIN/pg_ctl" -D "$PL_BACKUP_PGDATA" status >/dev/null 2>&1
}

_pl_backup_start() {
  pl_as_owner "$PL_BACKUP_PGBIN/pg_ctl" -D "$PL_BACKUP_PGDATA" -l "$PL_BACKUP_DIR/server.log" \
    -w -t "$PL_BACKUP_TIMEOUT" start >/dev/null \
    || { tail -n 20 "$PL_BACKUP_DIR/server.log" >&2; _pl_backup_die "the server did not start (log: $PL_BACKUP_DIR/server.log)"; return 1; }
}

# Makes archive_timeout count from now. Measured on PostgreSQL 15.18: after a start, the
# checkpointer (which forces the timed WAL switches) sleeps until its first checkpoint, up to
# checkpoint_timeout (5 min) later, and until then a quiet server archives nothing however old
# its writes are; a CHECKPOINT wakes it, and the switches come every archive_timeout after.
_pl_backup_wake_checkpointer() {
  _pl_backup_sql "CHECKPOINT" >/dev/null
}

# SIGKILLs the postmaster on PGDATA and everything in its process group: pg_ctl starts it in a
# session of its own, so the group holds its children and any archive-push they run.
_pl_backup_kill() {
  local pid
  [ -s "$PL_BACKUP_PGDATA/postmaster.pid" ] || return 0
  pid=$(head -n 1 "$PL_BACKUP_PGDATA/postmaster.pid")
  [ -n "$pid" ] && ps -o args= -p "$pid" 2>/dev/null | grep -qF -- "$PL_BACKUP_PGDATA" || return 0
  kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" $(pgrep -P "$pid" || true) 2>/dev/null || true
  _pl_backup_wait_gone "$pid"
}

# Waits until <pid> has exited (a zombie counts as gone: whoever reaps it may take seconds).
_pl_backup_wait_gone() { # pid
  local deadline=$(( $(date +%s) + 10 )) state
  while [ "$(date +%s)" -lt "$deadline" ]; do
    state=$(ps -o stat= -p "$1" 2>/dev/null) || return 0
    case $state in Z*) return 0 ;; esac
    sleep 0.1
  done
}

_pl_backup_write_env() {
  local v
  for v in DATABASE_URL PL_BACKUP_DIR PL_BACKUP_PGDATA PL_BACKUP_CONFIG PL_BACKUP_STANZA; do
    printf "export %s='%s'\n" "$v" "${!v}"
  done >"$PL_BACKUP_DIR/backup.env"
}

# Creates the set in a new folder: initdb, the archiving settings, pgbackrest.conf, the server,
# stanza-create and check. Exports the variables and writes backup.env. Extra "name=value"
# arguments go to postgresql.conf after the defaults (archive_timeout=10 overrides the 60).
pl_backup_up() {
  local t0 setting
  t0=$(_pl_backup_now)
  pl_ensure_packages --no-install-recommends postgresql pgbackrest jq
  command -v pgbackrest >/dev/null || _pl_backup_die "pgbackrest not found after install" || return 1
  PL_BACKUP_PGBIN=$(pl_pg_bindir)

  PL_BACKUP_DIR=$(mktemp -d /tmp/plb.XXXXXX)
  PL_BACKUP_PGDATA=$PL_BACKUP_DIR/data
  PL_BACKUP_CONFIG=$PL_BACKUP_DIR/pgbackrest.conf
  export PL_BACKUP_DIR PL_BACKUP_PGDATA PL_BACKUP_CONFIG PL_BACKUP_STANZA
  chmod 755 "$PL_BACKUP_DIR"
  if [ "$(id -u)" = 0 ]; then chown postgres: "$PL_BACKUP_DIR"; fi
  echo "backup: folder $PL_BACKUP_DIR" >&2

  pl_as_owner "$PL_BACKUP_PGBIN/initdb" -D "$PL_BACKUP_PGDATA" -U postgres -A trust -E UTF8 --locale=C.UTF-8 \
    >"$PL_BACKUP_DIR/initdb.log" 2>&1 \
    || { cat "$PL_BACKUP_DIR/initdb.log" >&2; _pl_backup_die "initdb failed"; return 1; }
  # In postgresql.conf rather than on pg_ctl's command line: a restore brings PGDATA back from
  # the repository, these settings with it, and the restored server archives again at once.
  {
    printf '\n# Added by Tools/lib/backup.sh\n'
    echo "listen_addresses = ''"
    echo "unix_socket_directories = '$PL_BACKUP_DIR'"
    echo "port = $PL_BACKUP_PORT"
    echo "max_connections = 200"
    echo "wal_level = replica"
    echo "archive_mode = on"
    echo "archive_command = 'pgbackrest --config=$PL_BACKUP_CONFIG --stanza=$PL_BACKUP_STANZA archive-push %p'"
    # At most this many seconds of commits sit in a WAL segment not yet archived: what a total
    # loss of the machine loses at worst. Shorter archives more, mostly empty, 16 MB segments.
    echo "archive_timeout = 60"
    for setting in "$@"; do
      case $setting in *=*) ;; *) _pl_backup_die "'$setting' is not name=value"; return 1 ;; esac
      printf "%s = '%s'\n" "${setting%%=*}" "${setting#*=}"
    done
  } >>"$PL_BACKUP_PGDATA/postgresql.conf"
  pl_backup_write_config "$PL_BACKUP_DIR" "pg1-path=$PL_BACKUP_PGDATA" "pg1-socket-path=$PL_BACKUP_DIR" \
    "pg1-port=$PL_BACKUP_PORT" "pg1-user=postgres"
  DATABASE_URL="host=$PL_BACKUP_DIR port=$PL_BACKUP_PORT user=postgres dbname=postgres"
  export DATABASE_URL

  _pl_backup_start || return 1
  _pl_backup_wake_checkpointer || return 1
  echo "backup: server up at $(_pl_backup_since "$t0") s" >&2
  pl_backup_pgbackrest "$PL_BACKUP_DIR" stanza-create \
    || _pl_backup_die "pgbackrest stanza-create failed (its message is above)" || return 1
  # check forces a WAL switch and waits until that segment is in the repository: archiving
  # works end to end.
  pl_backup_pgbackrest "$PL_BACKUP_DIR" check \
    || _pl_backup_die "pgbackrest check failed (its message is above; server log: $PL_BACKUP_DIR/server.log)" || return 1
  _pl_backup_write_env
  echo "backup: up in $(_pl_backup_since "$t0") s" >&2
}

# Prints backup.env's lines.
pl_backup_env() { cat "$PL_BACKUP_DIR/backup.env"; }

# Restores the set and opens it for writes: "--latest" (all the WAL archived) or "--time T"
# (the last transaction committed at or before T). Then takes a fresh full backup and prints
# backup.env's lines and that backup's. When pgBackRest refuses (no backup before T, ...) it
# has written nothing: the server is started again as it was and the restore fails.
pl_backup_restore() { # --latest | --time T
  local t0 target=() delta=() was_running= restored= what
  case "${1:-}" in
    --latest) what="the latest archived WAL" ;;
    --time)
      [ -n "${2:-}" ] || _pl_backup_die "restore --time needs a time ('YYYY-MM-DD HH:MM:SS.ffffff+00')" || return 1
      # With an explicit zone: the server's own (TimeZone) is not this shell's.
      [[ "$2" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}\ [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?[+-][0-9]{2}(:?[0-9]{2})?$ ]] \
        || _pl_backup_die "restore --time '$2': give 'YYYY-MM-DD HH:MM:SS[.ffffff]+00' (a zone offset is required; SELECT now() prints this form)" || return 1
      target=(--type=time "--target=$2" --target-action=promote)
      what="$2"
      ;;
    *) _pl_backup_die "restore needs --latest or --time 'YYYY-MM-DD HH:MM:SS.ffffff+00'"; return 1 ;;
  esac
  t0=$(_pl_backup_now)
  if _pl_backup_running; then
    was_running=1
    # The segment being written is archived only once full or after archive_timeout; check
    # switches to a new one and waits until the old one is in the repository, so a restore
    # of a running server loses nothing. Of a stopped or lost server, what was not archived is
    # lost, as on a lost machine.
    pl_backup_pgbackrest "$PL_BACKUP_DIR" check \
      || _pl_backup_die "pgbackrest check failed: the WAL written since the last archived segment would be lost; nothing was restored" || return 1
    pl_as_owner "$PL_BACKUP_PGBIN/pg_ctl" -D "$PL_BACKUP_PGDATA" -m immediate -w stop >/dev/null \
      || _pl_backup_die "could not stop the server" || return 1
  elif [ -s "$PL_BACKUP_PGDATA/postmaster.pid" ]; then
    # A postmaster killed by SIGKILL leaves its pid file; pgBackRest takes it for a running
    # server and refuses.
    rm -f "$PL_BACKUP_PGDATA/postmaster.pid"
  fi
  if [ ! -d "$PL_BACKUP_PGDATA" ]; then
    install -d -m 0700 -o postgres -g postgres "$PL_BACKUP_PGDATA"
  fi
  # --delta rewrites only the files that differ; an empty PGDATA (after `lose`) needs none.
  delta=()
  if [ -n "$(ls -A "$PL_BACKUP_PGDATA")" ]; then delta=(--delta); fi
  if ! pl_backup_pgbackrest "$PL_BACKUP_DIR" restore ${delta[@]+"${delta[@]}"} ${target[@]+"${target[@]}"}; then
    if [ -n "$was_running" ] && _pl_backup_start 2>/dev/null; then
      _pl_backup_wake_checkpointer || true
      echo "backup: the server was started again as it was" >&2
    fi
    _pl_backup_die "pgbackrest restore to $what failed (its message is above; log: $PL_BACKUP_DIR/log/$PL_BACKUP_STANZA-restore.log)"
    return 1
  fi
  restored=$(sed -n 's/.*INFO: repo1: restore backup set \([^,]*\).*/\1/p' \
    "$PL_BACKUP_DIR/log/$PL_BACKUP_STANZA-restore.log" 2>/dev/null | tail -n 1)
  echo "backup: restored backup set ${restored:-?} in $(_pl_backup_since "$t0") s; recovering to $what" >&2
  # A target past the last archived WAL is found out only here: PostgreSQL stops with
  # "recovery ended before configured recovery target was reached".
  if ! _pl_backup_start || ! _pl_backup_wait_promoted; then
    _pl_backup_die "recovery to $what failed (the server's lines above); the server is stopped: restore again (--latest, or another --time)"
    return 1
  fi
  echo "backup: writable at $(_pl_backup_since "$t0") s" >&2
  # A standby cloned from it later must not inherit the restore's target (see
  # _pl_backup_forget_recovery_settings).
  _pl_backup_forget_recovery_settings "$DATABASE_URL" || return 1
  # The restored server is on a new timeline. PostgreSQL 15 ends an archive recovery with a
  # checkpoint of its own (server.log: "end-of-recovery immediate wait"; a promotion by
  # pg_ctl promote only requests one), archives the new timeline's .history file at once, and
  # its first WAL segment once full, switched or archive_timeout old. CHECKPOINT makes sure
  # the checkpointer has run on the new timeline, whichever way recovery ended, so that
  # archive_timeout holds from here (_pl_backup_wake_checkpointer); the fresh full backup gives
  # the next restore a base on the new timeline, instead of an old backup and a replay across
  # the branch.
  _pl_backup_wake_checkpointer || return 1
  pl_backup_env
  pl_backup_take "$PL_BACKUP_DIR" full || return 1
  echo "backup: restore, recovery and a fresh full backup took $(_pl_backup_since "$t0") s" >&2
}

# Waits until the server accepts connections and has left recovery, at most PL_BACKUP_TIMEOUT
# seconds; fails at once, with the server's last lines, when recovery stops it.
_pl_backup_wait_promoted() {
  local deadline=$(( $(date +%s) + PL_BACKUP_TIMEOUT ))
  until [ "$(_pl_backup_sql "SELECT pg_is_in_recovery()" 2>/dev/null)" = f ]; do
    if ! _pl_backup_running; then
      tail -n 20 "$PL_BACKUP_DIR/server.log" >&2
      _pl_backup_die "the server stopped during recovery (log: $PL_BACKUP_DIR/server.log)"
      return 1
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      _pl_backup_die "still in recovery after $PL_BACKUP_TIMEOUT s (log: $PL_BACKUP_DIR/server.log)"
      return 1
    fi
    sleep 0.2
  done
}

# The total loss of the database machine: SIGKILL to the server and all its processes, and
# PGDATA deleted. The repository stays, as on another machine.
pl_backup_lose() {
  _pl_backup_kill
  rm -rf "$PL_BACKUP_PGDATA"
  # A lost machine takes its socket and the socket's lock file with it. Left here, the lock file
  # names the killed postmaster's PID, which stays taken while that process is an unreaped
  # zombie (a test runner that started it does not reap it), and the restored server refuses to
  # start on that socket.
  rm -f "$PL_BACKUP_DIR"/.s.PGSQL.*
  echo "backup: server killed and $PL_BACKUP_PGDATA deleted; the repository stays ($PL_BACKUP_DIR/repo)" >&2
}

# Stops the server and every pgBackRest process of the set in <dir>, and removes the folder.
# Safe twice and from a trap, also after a failed pl_backup_up.
pl_backup_down() { # dir
  local dir=${1:-} deadline pids
  [ -n "$dir" ] || return 0
  case $dir in /tmp/plb.*) ;; *) _pl_backup_die "refusing to remove $dir (not a /tmp/plb.* backup folder)"; return 1 ;; esac
  if [ ! -d "$dir" ]; then
    echo "backup: $dir is already gone" >&2
  else
    PL_BACKUP_DIR=$dir PL_BACKUP_PGDATA=$dir/data PL_BACKUP_PGBIN=$(pl_pg_bindir)
    if _pl_backup_running; then
      pl_as_owner "$PL_BACKUP_PGBIN/pg_ctl" -D "$PL_BACKUP_PGDATA" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    _pl_backup_kill
    # An archive-push or backup still running names the folder in its arguments.
    pids=$(pgrep -f -- "--config=$dir/" || true)
    if [ -n "$pids" ]; then kill -KILL $pids 2>/dev/null || true; fi
    deadline=$(( $(date +%s) + 10 ))
    while pgrep -f -- "$dir/" >/dev/null 2>&1 && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.2; done
    rm -rf "$dir"
    echo "backup: stopped and removed $dir" >&2
  fi
  if [ -s "$PL_BACKUP_STATE_FILE" ] && [ "$(cat "$PL_BACKUP_STATE_FILE")" = "$dir" ]; then
    rm -f "$PL_BACKUP_STATE_FILE"
  fi
  return 0
}

# --- The failover set's repository (Tools/cluster up --backup) --------------------------------
#
# One repository and one stanza for both data nodes, in $PL_CLUSTER_DIR/repo beside the nodes.
# Each node archives with the same archive_command (pg_basebackup and pg_rewind copy
# postgresql.conf from one node to the other, so it cannot name a node): the archiver runs it
# in the node's PGDATA, so "$PWD" is that node's, and $PWD/.. the set's folder. Only the
# primary archives (archive_mode=on, not always); after a failover the new primary goes on in
# the same repository, on a new timeline. Backups are taken from whichever node is primary.
# The stanza can be created only once node1 runs: until then node1's archive_command fails
# ("unable to load info file ... archive.info" in its log) and PostgreSQL keeps the segments
# and tries again, so nothing is lost. There is no restore for the set (Tools/backup has one).

# The settings Tools/cluster up --backup appends to the data nodes' postgresql.conf.
pl_cluster_backup_settings() {
  echo "archive_mode=on"
  echo 'archive_command=pgbackrest --config="$PWD/../pgbackrest.conf" --stanza='"$PL_BACKUP_STANZA"' --pg1-path="$PWD" archive-push %p'
  echo "archive_timeout=60"
}

# Writes $PL_CLUSTER_DIR/pgbackrest.conf, once the folder exists and before node1 starts. Its
# pg1 is node1; the commands below name the primary of the moment instead.
pl_cluster_backup_config() {
  pl_backup_write_config "$PL_CLUSTER_DIR" "pg1-path=$PL_CLUSTER_NODE1_PGDATA" \
    "pg1-port=$PL_CLUSTER_NODE1_PORT" "pg1-socket-path=$PL_CLUSTER_DIR" "pg1-user=postgres"
}

# pgBackRest's options for the current primary: --pg1-path=... --pg1-port=...
_pl_cluster_backup_primary() {
  local node
  node=$(pl_cluster_primary) || _pl_backup_die "the monitor reports no primary" || return 1
  echo "--pg1-path=$(_pl_cluster_node_var "$node" PGDATA) --pg1-port=$(_pl_cluster_node_var "$node" PORT)"
}

# Creates the stanza on the primary and checks that its WAL reaches the repository.
pl_cluster_backup_init() {
  local options primary
  options=$(_pl_cluster_backup_primary) || return 1
  read -r -a primary <<<"$options"
  pl_backup_pgbackrest "$PL_CLUSTER_DIR" stanza-create "${primary[@]}" \
    || _pl_backup_die "pgbackrest stanza-create failed (its message is above)" || return 1
  pl_backup_pgbackrest "$PL_CLUSTER_DIR" check "${primary[@]}" \
    || _pl_backup_die "pgbackrest check failed (its message is above; the primary's log is in its PGDATA/log)" || return 1
  # archive_timeout holds from now on (see _pl_backup_wake_checkpointer).
  _pl_cluster_node_sql "$(pl_cluster_primary)" "CHECKPOINT" >/dev/null
}

# Takes a backup (full, incr or diff) of the primary; prints pl_backup_last's lines.
pl_cluster_backup_take() { # type
  local options primary
  [ -s "$PL_CLUSTER_DIR/pgbackrest.conf" ] \
    || _pl_backup_die "$PL_CLUSTER_DIR has no repository (start the set with Tools/cluster up --backup)" || return 1
  options=$(_pl_cluster_backup_primary) || return 1
  read -r -a primary <<<"$options"
  pl_backup_take "$PL_CLUSTER_DIR" "$1" "${primary[@]}"
}

# Restores the failover set from its repository, as docs/backup-and-restore.md's "With
# pg_auto_failover" says (arguments: --latest, or --time 'YYYY-MM-DD HH:MM:SS+00'): stops both
# keepers and drops both nodes from the monitor, so no keeper fights the restore; restores node1
# and lets it replay and promote, started by hand; stops it and registers it again (pg_autoctl
# starts it and, alone in the group, makes it the primary, synchronous replication off); empties
# node2 and creates it again, cloned from node1, until it is the secondary; then checkpoints and
# takes a fresh full backup of the new timeline. pgBackRest's and PostgreSQL's errors are shown.
pl_cluster_backup_restore() { # --latest | --time T
  local dir=$PL_CLUSTER_DIR target=() name i in_recovery
  [ -s "$dir/pgbackrest.conf" ] || _pl_backup_die "$dir has no repository (start the set with Tools/cluster up --backup)" || return 1
  case "${1:-}" in
    --latest) ;;
    --time) [ -n "${2:-}" ] || _pl_backup_die "--time needs 'YYYY-MM-DD HH:MM:SS+00'" || return 1
      target=(--type=time "--target=$2" --target-action=promote) ;;
    *) _pl_backup_die "restore takes --latest or --time 'YYYY-MM-DD HH:MM:SS+00'"; return 2 ;;
  esac
  for name in node2 node1; do
    _pl_cluster_autoctl stop --pgdata "$dir/$name" >/dev/null 2>&1 || true
  done
  for i in $(seq 100); do
    pgrep -f -- "pg_autoctl run --pgdata $dir/node" >/dev/null || break
    sleep 0.1
  done
  for name in node2 node1; do
    _pl_cluster_autoctl drop node --monitor "$PL_CLUSTER_MONITOR_URI" --formation default --name "$name" --force >/dev/null 2>&1 \
      || _pl_backup_die "pg_autoctl drop node $name failed" || return 1
    # The dropped node's keeper files: its next registration starts afresh.
    rm -rf "$dir/config/pg_autoctl$dir/$name" "$dir/share/pg_autoctl$dir/$name"
  done
  pl_backup_pgbackrest "$dir" --delta "${target[@]}" restore --pg1-path="$dir/node1" \
    || _pl_backup_die "pgbackrest restore failed (its message is above)" || return 1
  # Started by hand to replay the archive and promote; pg_autoctl passes port and socket on the
  # command line, so they are given here too.
  pl_as_owner "$PL_CLUSTER_PGBIN/pg_ctl" -D "$dir/node1" -l "$dir/node1-restore.log" -w -t 300 \
    -o "-p $PL_CLUSTER_NODE1_PORT -k $dir -c listen_addresses=127.0.0.1" start >/dev/null \
    || { tail -n 20 "$dir/node1-restore.log" >&2; _pl_backup_die "node1 did not start after the restore"; return 1; }
  for i in $(seq 300); do
    in_recovery=$(psql -X -qAt -h "$dir" -p "$PL_CLUSTER_NODE1_PORT" -U postgres -d postgres -c "SELECT pg_is_in_recovery()" 2>/dev/null || true)
    [ "$in_recovery" = f ] && break
    pl_as_owner "$PL_CLUSTER_PGBIN/pg_ctl" -D "$dir/node1" status >/dev/null 2>&1 || break
    sleep 1
  done
  if [ "$in_recovery" != f ]; then
    grep -h "FATAL\|recovery ended\|target" "$dir"/node1/log/*.log "$dir/node1-restore.log" 2>/dev/null | tail -n 5 >&2
    _pl_backup_die "node1 did not leave recovery (PostgreSQL's lines above)"; return 1
  fi
  # pgBackRest wrote the restore's settings into postgresql.auto.conf; pg_basebackup would copy
  # them to the standby, which would then stop at the same target and promote itself onto a
  # timeline of its own, and the primary's synchronous commits would wait for ever.
  _pl_backup_forget_recovery_settings "host=$dir port=$PL_CLUSTER_NODE1_PORT user=postgres dbname=postgres" || return 1
  # pg_autoctl starts the instance itself and refuses one already running.
  pl_as_owner "$PL_CLUSTER_PGBIN/pg_ctl" -D "$dir/node1" -m fast -w stop >/dev/null
  # Then as Tools/cluster up brings the pair up: node1 alone (single), node2 cloned from it.
  _pl_cluster_create_node node1 "$PL_CLUSTER_NODE1_PORT" || return 1
  _pl_cluster_wait_for "$PL_CLUSTER_TIMEOUT" "node1 to be single" _pl_cluster_has_state node1 single \
    || { tail -n 30 "$dir/node1.log" >&2; return 1; }
  rm -rf "$dir/node2"
  _pl_cluster_create_node node2 "$PL_CLUSTER_NODE2_PORT" || return 1
  _pl_cluster_wait_for "$PL_CLUSTER_TIMEOUT" "node1 primary and node2 secondary" _pl_cluster_healthy_pair node1 node2 \
    || { pl_cluster_states >&2; tail -n 30 "$dir/node2.log" >&2; return 1; }
  _pl_cluster_wait_for "$PL_CLUSTER_TIMEOUT" "synchronous replication from node1 to node2" _pl_cluster_sync_standby node1 \
    || return 1
  _pl_cluster_node_sql node1 "CHECKPOINT" >/dev/null
  pl_cluster_backup_take full
}

# Removes the recovery settings pgBackRest's restore wrote into postgresql.auto.conf (restore_command
# and the recovery target), once the server has left recovery: a standby cloned from it later
# must not inherit a target to stop and promote at.
_pl_backup_forget_recovery_settings() { # conninfo
  local name
  for name in restore_command recovery_target recovery_target_name recovery_target_time recovery_target_xid \
    recovery_target_lsn recovery_target_inclusive recovery_target_timeline recovery_target_action; do
    psql -X -qAt -v ON_ERROR_STOP=1 -d "$1" -c "ALTER SYSTEM RESET $name" >/dev/null \
      || _pl_backup_die "could not reset $name after the restore" || return 1
  done
  psql -X -qAt -d "$1" -c "SELECT pg_reload_conf()" >/dev/null
}
