# The release tested as a user installs it (issue 36, part 7). Sourced by Tools/test, not
# executed: `pl_package_test DEB` installs the package with apt-get into a clean Debian 12 root
# made by debootstrap (cached), starts the installed binary as its unit would (its user, its
# environment file, a NOTIFY_SOCKET this test reads), takes purchases through the API against
# the Apple simulator and the throwaway PostgreSQL, sends SIGTERM under load, restarts, and
# checks that nothing answered 2xx was lost and that the chain verifies.
#
# Needs root (debootstrap, chroot, mounts). The PostgreSQL is Tools/test's (pl_start_cluster:
# PL_PGSOCK, PL_PGBIN) when one runs, else one of its own; its socket folder is bind-mounted at
# the root's /run/postgresql, where Debian's own PostgreSQL puts its socket. The simulator is the
# debug build's (`swift build` has run). Everything it starts (servers, mounts, the root) is
# stopped and removed when it returns, failed or not.

# shellcheck source=Tools/lib/postgres.sh
. "$(dirname "${BASH_SOURCE[0]}")/postgres.sh"
# shellcheck source=Tools/lib/ports.sh
. "$(dirname "${BASH_SOURCE[0]}")/ports.sh"

PL_PACKAGE_TEST_CACHE=${PL_PACKAGE_TEST_CACHE:-/var/cache/purchase-ledger}
PL_PACKAGE_TEST_MIRROR=${PL_PACKAGE_TEST_MIRROR:-http://deb.debian.org/debian}
PL_PACKAGE_TEST_SECURITY=${PL_PACKAGE_TEST_SECURITY:-http://deb.debian.org/debian-security}

# Prints the path of a tarball of a clean Debian 12 root (debootstrap --variant=minbase), made
# once per bookworm point release: the key is the Date of the mirror's bookworm InRelease,
# which changes only with a point release. When the mirror cannot be asked, the newest cached
# root is used. Older roots are removed when a new one is made.
pl_package_test_root_tarball() {
  local date key tarball tmp
  mkdir -p "$PL_PACKAGE_TEST_CACHE"
  date=$(curl -fsS -m 30 "$PL_PACKAGE_TEST_MIRROR/dists/bookworm/InRelease" 2>/dev/null | sed -n 's/^Date: //p' | head -n 1 || true)
  if [ -z "$date" ]; then
    tarball=$(ls -t "$PL_PACKAGE_TEST_CACHE"/debian-bookworm-minbase-*.tar 2>/dev/null | head -n 1 || true)
    [ -n "$tarball" ] || { echo "package test: $PL_PACKAGE_TEST_MIRROR cannot be reached and no root is cached" >&2; return 1; }
    echo "package test: the mirror cannot be reached; using the cached $tarball" >&2
    echo "$tarball"
    return 0
  fi
  key=$(date -u -d "$date" +%Y%m%d)
  tarball="$PL_PACKAGE_TEST_CACHE/debian-bookworm-minbase-$key.tar"
  if [ ! -s "$tarball" ]; then
    echo "package test: making a clean Debian 12 root (debootstrap, bookworm of $key)" >&2
    tmp=$(mktemp -d /var/tmp/pl-debootstrap.XXXXXX)
    if ! debootstrap --variant=minbase bookworm "$tmp/root" "$PL_PACKAGE_TEST_MIRROR" >"$tmp/debootstrap.log" 2>&1; then
      tail -n 30 "$tmp/debootstrap.log" >&2
      pl_package_test_unmount_all "$tmp/root"
      rm -rf --one-file-system "$tmp"
      return 1
    fi
    # A Debian 12 as installed: its updates and security suites beside the release.
    cat >"$tmp/root/etc/apt/sources.list" <<EOF
deb $PL_PACKAGE_TEST_MIRROR bookworm main
deb $PL_PACKAGE_TEST_MIRROR bookworm-updates main
deb $PL_PACKAGE_TEST_SECURITY bookworm-security main
EOF
    rm -rf "$tmp/root/var/lib/apt/lists/"* "$tmp/root/var/cache/apt/archives/"*.deb
    pl_package_test_unmount_all "$tmp/root"
    tar -C "$tmp/root" --numeric-owner -cf "$tarball.part" . && mv "$tarball.part" "$tarball"
    rm -rf --one-file-system "$tmp"
    find "$PL_PACKAGE_TEST_CACHE" -maxdepth 1 -name 'debian-bookworm-minbase-*.tar' ! -path "$tarball" -delete
  fi
  echo "$tarball"
}

# Unmounts everything mounted at or below ROOT, deepest first; safe to call twice.
pl_package_test_unmount_all() { # root
  local root m
  root=$(realpath -m "$1")
  for m in $(awk -v r="$root" '$5 == r || index($5, r "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
}

pl_package_test() { # DEB
  # A subshell: its EXIT trap cleans up what it started without touching Tools/test's trap.
  (
    set -euo pipefail
    _pl_pt_dir= _pl_pt_root= _pl_pt_pids=() _pl_pt_db= _pl_pt_own_cluster=
    trap _pl_package_test_cleanup EXIT
    trap 'exit 130' INT TERM
    _pl_package_test_run "$@"
  )
}

_pl_package_test_cleanup() {
  local status=$? pid
  # A second ^C must not cut the cleanup short.
  trap '' INT TERM
  for pid in ${_pl_pt_pids[@]+"${_pl_pt_pids[@]}"}; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in ${_pl_pt_pids[@]+"${_pl_pt_pids[@]}"}; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ -n "$_pl_pt_root" ]; then
    pl_package_test_unmount_all "$_pl_pt_root"
    if awk -v r="$(realpath -m "$_pl_pt_root")" 'index($5, r "/") == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo; then
      echo "package test: something is still mounted under $_pl_pt_root; it is left in place" >&2
    else
      rm -rf --one-file-system "$_pl_pt_root"
    fi
  fi
  if [ -n "$_pl_pt_db" ]; then
    "$PL_PGBIN/psql" -X -q -d "host=$PL_PGSOCK port=5432 user=postgres dbname=postgres" -c "DROP DATABASE IF EXISTS $_pl_pt_db WITH (FORCE)" >/dev/null 2>&1 || true
  fi
  if [ -n "$_pl_pt_own_cluster" ]; then pl_stop_cluster; fi
  if [ -n "$_pl_pt_dir" ]; then
    if [ "$status" -ne 0 ] && [ -f "$_pl_pt_dir/serve.log" ]; then
      echo "package test: the server's last log lines:" >&2
      tail -n 30 "$_pl_pt_dir/serve.log" >&2
    fi
    rm -rf "$_pl_pt_dir"
  fi
  return "$status"
}

# The environment the unit gives its commands: only the variables of the installed ledger.env
# (systemd's EnvironmentFile= lines) and of the test's env file, and NOTIFY_SOCKET. Sets
# _pl_pt_envs.
_pl_pt_unit_environment() {
  local line
  _pl_pt_envs=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8)
  while IFS= read -r line; do _pl_pt_envs+=("$line"); done < <(
    cat "$_pl_pt_root/etc/purchase-ledger/ledger.env" "$_pl_pt_dir/test.env" | grep -E '^[A-Za-z_][A-Za-z0-9_]*=' || true)
  _pl_pt_envs+=("NOTIFY_SOCKET=/run/purchase-ledger-test/notify.sock")
}

# Becomes the command inside the root, run as the unit runs its commands: user and group
# purchase-ledger, no capabilities, no new privileges, umask 0077, the unit's environment, and
# no memory both writable and executable (MemoryDenyWriteExecute=yes, here the kernel's
# PR_SET_MDWE, kept across exec; skipped with a note on a kernel before 6.3).
# Call it in a subshell: ( _pl_pt_exec_as_unit ARGS... ) [&] ($! is then the command's pid).
_pl_pt_exec_as_unit() { # command...
  umask 0077
  exec "$_pl_pt_python" -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(65, 1, 0, 0, 0) != 0:  # PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN
    sys.stderr.write("package test: no PR_SET_MDWE on this kernel; W+X memory is not refused\n")
os.execvp(sys.argv[1], sys.argv[1:])
' env -i "${_pl_pt_envs[@]}" chroot "$_pl_pt_root" \
    setpriv --reuid=purchase-ledger --regid=purchase-ledger --init-groups --no-new-privs \
    --inh-caps=-all --bounding-set=-all -- "$@"
}

_pl_pt_now() { date +%s.%N; }
_pl_pt_since() { awk -v a="$1" -v b="$(_pl_pt_now)" 'BEGIN { printf "%.2f", b - a }'; }

# Waits until the notify log has a line with MESSAGE after line AFTER; prints its arrival time.
_pl_pt_wait_notify() { # message after-lines timeout-seconds pid
  local message=$1 after=$2 timeout=$3 pid=$4 end line
  end=$(($(date +%s) + timeout))
  while [ "$(date +%s)" -le "$end" ]; do
    line=$(tail -n +"$((after + 1))" "$_pl_pt_dir/notify.log" | grep -m 1 -E "(^|[[:space:]])$message([[:space:]]|$)" || true)
    if [ -n "$line" ]; then echo "${line%% *}"; return 0; fi
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# One load loop: purchases of coins by new users until the stop file exists. Each line of its
# log: USER ORDER-STATUS RECEIPT-STATUS ("-" when no order was made).
_pl_pt_load_loop() { # loop-number
  local n=$1 i=0 user order token code receipt txn body rc
  local api="http://127.0.0.1:$_pl_pt_port" sim="http://127.0.0.1:$_pl_pt_simport"
  local auth="Authorization: Bearer $_pl_pt_app_token" json="Content-Type: application/json"
  while [ ! -e "$_pl_pt_dir/stop" ]; do
    i=$((i + 1))
    user="pkgtest-$n-$i"
    body=$(curl -sS -m 30 -o - -w '\n%{http_code}' -H "$auth" -H "$json" -X POST "$api/v1/orders" \
      -d "{\"user_id\":\"$user\",\"product_id\":\"com.example.coins100\"}" 2>/dev/null || true)
    code=${body##*$'\n'}
    if [ "$code" != 201 ]; then
      echo "$user ${code:-000} -" >>"$_pl_pt_dir/load-$n.log"
      sleep 0.1
      continue
    fi
    order=$(sed -n 's/.*"order_id" *: *"\([^"]*\)".*/\1/p' <<<"$body" | head -n 1)
    token=$(sed -n 's/.*"app_account_token" *: *"\([^"]*\)".*/\1/p' <<<"$body" | head -n 1)
    body=$(curl -sS -m 30 -H "$json" -X POST "$sim/control/purchases" \
      -d "{\"apple_id\":\"pkgtest-apple-$n-$i\",\"product_id\":\"com.example.coins100\",\"app_account_token\":\"$token\",\"bundle_id\":\"com.example.app\"}" || true)
    receipt=$(sed -n 's/.*"receipt_data" *: *"\([^"]*\)".*/\1/p' <<<"$body" | head -n 1)
    txn=$(sed -n 's/.*"transaction_id" *: *"\([^"]*\)".*/\1/p' <<<"$body" | head -n 1)
    # No answer is logged with curl's exit status: 7 refused (serve down), 52 closed without an
    # answer, 56 reset.
    rc=0
    code=$(curl -sS -m 60 -o /dev/null -w '%{http_code}' -H "$auth" -H "$json" -X POST "$api/v1/receipts" \
      -d "{\"user_id\":\"$user\",\"receipt_data\":\"$receipt\",\"transaction_id\":\"$txn\",\"order_id\":\"$order\"}" 2>/dev/null) || rc=$?
    [ "$rc" -eq 0 ] || code="000/curl$rc"
    echo "$user 201 ${code:-000}" >>"$_pl_pt_dir/load-$n.log"
  done
}

# Starts serve inside the root as the unit would (after migrate, as ExecStartPre). Sets
# _pl_pt_serve and _pl_pt_ready_s, the seconds from its start to READY=1; fails when serve
# exits or sends no READY=1 within 120 s (it then waits, at most 60 s, for /healthz, so the
# rest of the test can run).
_pl_pt_start_serve() {
  local start lines ready i
  _pl_pt_ready_s= _pl_pt_migrate_s=
  start=$(_pl_pt_now)
  ( _pl_pt_exec_as_unit /usr/bin/purchase-ledger migrate ) >>"$_pl_pt_dir/serve.log" 2>&1 \
    || { echo "package test: migrate (ExecStartPre) failed" >&2; return 1; }
  _pl_pt_migrate_s=$(_pl_pt_since "$start")
  lines=$(wc -l <"$_pl_pt_dir/notify.log")
  start=$(_pl_pt_now)
  ( _pl_pt_exec_as_unit /usr/bin/purchase-ledger serve ) >>"$_pl_pt_dir/serve.log" 2>&1 &
  _pl_pt_serve=$!
  _pl_pt_pids+=("$_pl_pt_serve")
  if ready=$(_pl_pt_wait_notify READY=1 "$lines" 120 "$_pl_pt_serve"); then
    _pl_pt_ready_s=$(awk -v a="$start" -v b="$ready" 'BEGIN { printf "%.2f", b - a }')
    return 0
  fi
  if ! kill -0 "$_pl_pt_serve" 2>/dev/null; then
    echo "package test: serve exited before READY=1" >&2
    return 1
  fi
  # serve runs but never said READY=1: what systemd would kill at TimeoutStartSec.
  for i in $(seq 300); do curl -fsS -m 2 "http://127.0.0.1:$_pl_pt_port/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
  echo "package test: serve sent no READY=1 within 120 s" >&2
  return 1
}

# Sends SIGTERM to serve and checks it sends STOPPING=1 and exits 0 within 30 s. Sets
# _pl_pt_stop_s, the seconds it took.
_pl_pt_stop_serve() {
  local start lines status=0 i
  _pl_pt_stop_s=
  lines=$(wc -l <"$_pl_pt_dir/notify.log")
  start=$(_pl_pt_now)
  kill -TERM "$_pl_pt_serve"
  for i in $(seq 350); do kill -0 "$_pl_pt_serve" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$_pl_pt_serve" 2>/dev/null; then
    echo "package test: serve still runs 35 s after SIGTERM (TimeoutStopSec=30); killed" >&2
    kill -KILL "$_pl_pt_serve" 2>/dev/null || true
    wait "$_pl_pt_serve" 2>/dev/null || true
    return 1
  fi
  wait "$_pl_pt_serve" || status=$?
  _pl_pt_stop_s=$(_pl_pt_since "$start")
  if [ "$status" -ne 0 ]; then
    echo "package test: serve exited $status after SIGTERM (want 0)" >&2
    return 1
  fi
  if awk -v t="$_pl_pt_stop_s" 'BEGIN { exit !(t > 30) }'; then
    echo "package test: serve took $_pl_pt_stop_s s to exit after SIGTERM (TimeoutStopSec=30)" >&2
    return 1
  fi
  if ! tail -n +"$((lines + 1))" "$_pl_pt_dir/notify.log" | grep -qE '(^|[[:space:]])STOPPING=1([[:space:]]|$)'; then
    echo "package test: serve sent no STOPPING=1 on SIGTERM" >&2
    return 1
  fi
}

_pl_package_test_run() {
  local deb=${1:?usage: pl_package_test DEB} version commit tarball t0 install_s update_s ready_s ready2_s stop_s
  local bin sim_cmd ports i failures=()
  [ "$(id -u)" = 0 ] || { echo "package test: needs root (debootstrap, chroot, mount)" >&2; return 1; }
  [ -f "$deb" ] || { echo "package test: no package at $deb" >&2; return 1; }
  deb=$(realpath "$deb")
  pl_ensure_packages debootstrap curl postgresql
  command -v python3 >/dev/null 2>&1 || pl_ensure_packages python3
  _pl_pt_python=$(python3 -c 'import sys; print(sys.executable)')
  version=$(dpkg-deb -f "$deb" Version)

  # The simulator, from the debug build: its own product after the split, before it a
  # subcommand of purchase-ledger.
  bin=$(swift build --show-bin-path)
  if [ -x "$bin/apple-simulator" ]; then sim_cmd=("$bin/apple-simulator")
  elif [ -x "$bin/purchase-ledger" ]; then sim_cmd=("$bin/purchase-ledger" apple-simulator)
  else echo "package test: no apple-simulator in $bin (run swift build first)" >&2; return 1
  fi

  if [ -z "${PL_PGSOCK:-}" ] || [ -z "${PL_PGBIN:-}" ]; then
    pl_start_cluster -c fsync=off
    _pl_pt_own_cluster=1
  fi
  _pl_pt_dir=$(mktemp -d /tmp/pl-package-test.XXXXXX)

  # The clean root, fresh from the cached tarball.
  tarball=$(pl_package_test_root_tarball)
  _pl_pt_root=$(mktemp -d /var/tmp/pl-root.XXXXXX)
  tar -C "$_pl_pt_root" --numeric-owner -xf "$tarball"
  cp -L /etc/resolv.conf "$_pl_pt_root/etc/resolv.conf"
  mount -t proc proc "$_pl_pt_root/proc"
  mkdir -p "$_pl_pt_root/run/postgresql" "$_pl_pt_root/run/purchase-ledger-test"
  mount --bind "$PL_PGSOCK" "$_pl_pt_root/run/postgresql"
  cp "$deb" "$_pl_pt_root/tmp/"

  # Installed as a user installs it.
  t0=$(_pl_pt_now)
  chroot "$_pl_pt_root" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$_pl_pt_dir/apt.log" 2>&1 \
    || { cat "$_pl_pt_dir/apt.log" >&2; return 1; }
  update_s=$(_pl_pt_since "$t0")
  t0=$(_pl_pt_now)
  chroot "$_pl_pt_root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "/tmp/$(basename "$deb")" >>"$_pl_pt_dir/apt.log" 2>&1 \
    || { tail -n 40 "$_pl_pt_dir/apt.log" >&2; return 1; }
  install_s=$(_pl_pt_since "$t0")
  echo "package test: installed $(basename "$deb") ($(stat -c %s "$deb") bytes; $(dpkg-deb -f "$deb" Installed-Size) KiB installed) in ${install_s} s (apt-get update ${update_s} s; $(grep -oE '[0-9]+ newly installed' "$_pl_pt_dir/apt.log" || echo '? newly installed') packages)" >&2

  # What the package promised.
  chroot "$_pl_pt_root" getent passwd purchase-ledger >/dev/null || failures+=("no system user purchase-ledger")
  chroot "$_pl_pt_root" getent group purchase-ledger >/dev/null || failures+=("no system group purchase-ledger")
  i=$(chroot "$_pl_pt_root" stat -c '%a %U %G' /etc/purchase-ledger/ledger.env 2>/dev/null || echo missing)
  [ "$i" = "640 root purchase-ledger" ] || failures+=("/etc/purchase-ledger/ledger.env is '$i', want '640 root purchase-ledger'")
  [ -f "$_pl_pt_root/usr/lib/systemd/system/purchase-ledger.service" ] || failures+=("no /usr/lib/systemd/system/purchase-ledger.service")
  for i in README.md changelog.gz CHANGELOG.md.gz copyright versions.txt examples/pgbackrest.conf docs/backup-and-restore.md; do
    [ -f "$_pl_pt_root/usr/share/doc/purchase-ledger/$i" ] || failures+=("no /usr/share/doc/purchase-ledger/$i")
  done
  i=$(chroot "$_pl_pt_root" /usr/bin/purchase-ledger --version 2>&1 || true)
  case "$i" in
    "purchase-ledger $version ("*")") ;;
    *) failures+=("purchase-ledger --version printed '$i', want 'purchase-ledger $version (COMMIT)'") ;;
  esac
  i=$(chroot "$_pl_pt_root" ldd /usr/bin/purchase-ledger 2>&1 | grep -E 'not found|libswift' || true)
  [ -z "$i" ] || failures+=("ldd in the clean root: $i")

  # The test's settings, as an administrator would add them to ledger.env.
  # shellcheck disable=SC2086 # the range is two words
  pl_ports_check_range $PL_PORTS_TOOLS "the tools' servers"
  # shellcheck disable=SC2086
  ports=$(pl_free_ports $PL_PORTS_TOOLS 2)
  read -r _pl_pt_simport _pl_pt_port <<<"$ports"
  _pl_pt_app_token=pkgtest-app-token-0123456789
  _pl_pt_db="package_test_$$"
  "$PL_PGBIN/psql" -X -q -d "host=$PL_PGSOCK port=5432 user=postgres dbname=postgres" -c "CREATE DATABASE $_pl_pt_db"
  mkdir -p "$_pl_pt_root/etc/purchase-ledger/test"
  cat >"$_pl_pt_root/etc/purchase-ledger/test/catalog.json" <<'JSON'
{"products": [
  {"product_id": "com.example.coins100", "kind": "consumable", "grants": {"coins": 100}, "price_minor": 99, "currency": "USD"}
]}
JSON
  "${sim_cmd[@]}" --address "127.0.0.1:$_pl_pt_simport" --root-certificate-out "$_pl_pt_dir/root.der" >"$_pl_pt_dir/simulator.log" 2>&1 &
  _pl_pt_pids+=("$!")
  for i in $(seq 300); do [ -s "$_pl_pt_dir/root.der" ] && break; sleep 0.2; done
  [ -s "$_pl_pt_dir/root.der" ] || { cat "$_pl_pt_dir/simulator.log" >&2; echo "package test: the simulator did not start" >&2; return 1; }
  cp "$_pl_pt_dir/root.der" "$_pl_pt_root/etc/purchase-ledger/test/root.der"
  chgrp -R purchase-ledger "$_pl_pt_root/etc/purchase-ledger/test" 2>/dev/null \
    || chroot "$_pl_pt_root" chgrp -R purchase-ledger /etc/purchase-ledger/test
  chmod 0750 "$_pl_pt_root/etc/purchase-ledger/test"
  chmod 0640 "$_pl_pt_root/etc/purchase-ledger/test/"*
  cat >"$_pl_pt_dir/test.env" <<EOF
DATABASE_URL=host=/run/postgresql port=5432 user=postgres dbname=$_pl_pt_db
LEDGER_HTTP_ADDRESS=127.0.0.1:$_pl_pt_port
LEDGER_API_TOKENS=$_pl_pt_app_token:app
LEDGER_CATALOG=/etc/purchase-ledger/test/catalog.json
APPLE_BUNDLE_ID=com.example.app
APPLE_VERIFY_RECEIPT_PRODUCTION_URL=http://127.0.0.1:$_pl_pt_simport/production/verifyReceipt
APPLE_VERIFY_RECEIPT_SANDBOX_URL=http://127.0.0.1:$_pl_pt_simport/sandbox/verifyReceipt
APPLE_ROOT_CERTIFICATES=/etc/purchase-ledger/test/root.der
APPLE_SERVER_API_URL=http://127.0.0.1:$_pl_pt_simport
LEDGER_RECONCILE_INTERVAL=0
LOG_LEVEL=notice
EOF

  # systemd's side of NOTIFY_SOCKET: a datagram socket; each line of notify.log is the
  # arrival time and one message.
  : >"$_pl_pt_dir/notify.log"
  python3 -u -c '
import os, socket, sys, time
path, log = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
os.chmod(path, 0o777)
with open(log, "a") as out:
    while True:
        data = s.recv(4096)
        out.write("%.6f %s\n" % (time.time(), data.decode("utf-8", "replace").replace("\n", " ")))
        out.flush()
' "$_pl_pt_root/run/purchase-ledger-test/notify.sock" "$_pl_pt_dir/notify.log" &
  _pl_pt_pids+=("$!")
  for i in $(seq 100); do [ -S "$_pl_pt_root/run/purchase-ledger-test/notify.sock" ] && break; sleep 0.05; done

  # Started as the unit starts it.
  _pl_pt_unit_environment
  if _pl_pt_start_serve; then
    ready_s=$_pl_pt_ready_s
    echo "package test: migrate (ExecStartPre) took $_pl_pt_migrate_s s on an empty database; READY=1 ${ready_s} s after serve started" >&2
  else
    kill -0 "$_pl_pt_serve" 2>/dev/null || return 1
    failures+=("serve sent no READY=1")
  fi

  # Load, SIGTERM under it, a restart, more load.
  local loops=()
  for i in $(seq 8); do
    _pl_pt_load_loop "$i" &
    loops+=("$!")
    _pl_pt_pids+=("$!")
  done
  sleep 8
  if _pl_pt_stop_serve; then
    stop_s=$_pl_pt_stop_s
    echo "package test: serve stopped under load $stop_s s after SIGTERM: exit 0, STOPPING=1" >&2
  else
    failures+=("serve's stop under load")
  fi
  if _pl_pt_start_serve; then
    ready2_s=$_pl_pt_ready_s
    echo "package test: restarted: migrate $_pl_pt_migrate_s s (nothing to apply); READY=1 ${ready2_s} s after serve started" >&2
  else
    kill -0 "$_pl_pt_serve" 2>/dev/null || return 1
    failures+=("serve sent no READY=1 on restart")
  fi
  sleep 5
  touch "$_pl_pt_dir/stop"
  for i in "${loops[@]}"; do wait "$i" 2>/dev/null || true; done

  # Nothing answered 2xx is lost: each such user holds the 100 coins of its purchase (an answer
  # 202 "pending" is delivered by the retry worker, so the check waits for it).
  cat "$_pl_pt_dir"/load-*.log >"$_pl_pt_dir/load.log"
  local total accepted answered lost=0 user status body deadline
  total=$(wc -l <"$_pl_pt_dir/load.log")
  accepted=$(awk '$3 ~ /^2/' "$_pl_pt_dir/load.log" | wc -l)
  echo "package test: $total purchases tried; receipt answers: $(awk '{ print $3 }' "$_pl_pt_dir/load.log" | sort | uniq -c | awk '{ printf "%s%s x%s", sep, $2, $1; sep = ", " }')" >&2
  [ "$accepted" -gt 0 ] || failures+=("no receipt was answered 2xx")
  deadline=$(($(date +%s) + 120))
  while read -r user _ status; do
    case "$status" in 2*) ;; *) continue ;; esac
    while :; do
      body=$(curl -sS -m 10 -H "Authorization: Bearer $_pl_pt_app_token" "http://127.0.0.1:$_pl_pt_port/v1/users/$user" 2>/dev/null || true)
      if grep -qE '"coins" *: *100([^0-9]|$)' <<<"$body"; then break; fi
      if [ "$(date +%s)" -gt "$deadline" ]; then
        lost=$((lost + 1))
        echo "package test: $user was answered $status but holds no coins: $body" >&2
        break
      fi
      sleep 0.5
    done
  done <"$_pl_pt_dir/load.log"
  [ "$lost" -eq 0 ] || failures+=("$lost of $accepted purchases answered 2xx were not delivered")
  answered=$accepted
  echo "package test: $((answered - lost)) of $answered purchases answered 2xx are delivered" >&2

  ( _pl_pt_exec_as_unit /usr/bin/purchase-ledger verify ) >"$_pl_pt_dir/verify.log" 2>&1 \
    || { cat "$_pl_pt_dir/verify.log" >&2; failures+=("purchase-ledger verify failed"); }
  _pl_pt_stop_serve || failures+=("serve's final stop")

  # Removing keeps the settings (and the database, which the package never touches); purging
  # drops /etc/purchase-ledger.
  echo "# an operator's change" >>"$_pl_pt_root/etc/purchase-ledger/ledger.env"
  chroot "$_pl_pt_root" env DEBIAN_FRONTEND=noninteractive apt-get remove -y -q purchase-ledger >>"$_pl_pt_dir/apt.log" 2>&1 \
    || failures+=("apt-get remove failed")
  [ ! -e "$_pl_pt_root/usr/lib/purchase-ledger/purchase-ledger" ] || failures+=("the binary is still there after remove")
  grep -q "an operator's change" "$_pl_pt_root/etc/purchase-ledger/ledger.env" 2>/dev/null \
    || failures+=("remove did not keep /etc/purchase-ledger/ledger.env")
  chroot "$_pl_pt_root" env DEBIAN_FRONTEND=noninteractive apt-get purge -y -q purchase-ledger >>"$_pl_pt_dir/apt.log" 2>&1 \
    || failures+=("apt-get purge failed")
  [ ! -e "$_pl_pt_root/etc/purchase-ledger" ] || failures+=("purge left /etc/purchase-ledger")
  echo "package test: remove kept the settings, purge removed them" >&2

  echo "package test: package $(basename "$deb"): $(stat -c %s "$deb") bytes; install ${install_s} s; READY=1 ${ready_s:-none} s (empty database), ${ready2_s:-none} s (restart)" >&2
  if [ ${#failures[@]} -gt 0 ]; then
    printf 'package test: FAILED: %s\n' "${failures[@]}" >&2
    return 1
  fi
  echo "package test: passed" >&2
}
