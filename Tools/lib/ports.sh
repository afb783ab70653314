# Where the repository's servers listen on 127.0.0.1: one range per kind of server, disjoint,
# all below the kernel's ephemeral range (net.ipv4.ip_local_port_range, 32768-60999 by default),
# from which the kernel hands ports to port-0 servers and to outgoing connections. Sourced, not
# executed (by Tools/lib/cluster.sh and Tools/lib/api-check.sh).
#
#   14000-19999  servers a test stops and starts again on the same port
#                (Tests/TestSupport/LoopbackPort.swift, which holds the same plan)
#   20000-29999  the pg_auto_failover set's monitor and nodes (Tools/cluster), which the
#                failover tests kill and start again on their ports
#   30000-32767  the simulator and ledger the tools start on a port they choose (api-check)
#
# Every other server binds port 0 and is handed a port in the ephemeral range. Below 14000:
# the defaults people use by hand (8080, 8090, 5432) and chromedriver's old 12000-13000.
PL_PORTS_TESTS="14000 19999"
PL_PORTS_CLUSTER="20000 29999"
PL_PORTS_TOOLS="30000 32767"

# Fails, saying why, when the kernel's ephemeral range overlaps LOW-HIGH: a port chosen there
# could be handed to an outgoing connection while its server is down.
pl_ports_check_range() { # low high what
  local low=$1 high=$2 what=$3 elow ehigh
  read -r elow ehigh </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || return 0
  if [ "$low" -le "$ehigh" ] && [ "$elow" -le "$high" ]; then
    echo "ports: the kernel's ephemeral range $elow-$ehigh (net.ipv4.ip_local_port_range) overlaps $what's range $low-$high;" \
      "set it to start above 32767 (sysctl -w net.ipv4.ip_local_port_range=\"32768 60999\")" >&2
    return 1
  fi
}

# Prints COUNT distinct ports of LOW-HIGH, from a random start, on which nothing listens now
# and that are not among the AVOID ports. Fails when the range has not that many.
pl_free_ports() { # low high count [avoid...]
  local low=$1 high=$2 want=$3 span p tries=0 taken found=()
  shift 3
  taken=" $(ss -Hltn 2>/dev/null | awk '{ n = split($4, a, ":"); printf "%s ", a[n] }') $* "
  span=$((high - low + 1))
  p=$((low + RANDOM % span))
  while [ ${#found[@]} -lt "$want" ]; do
    tries=$((tries + 1))
    if [ "$tries" -gt "$span" ]; then
      echo "ports: fewer than $want free ports in $low-$high" >&2
      return 1
    fi
    p=$((p + 1)); [ "$p" -le "$high" ] || p=$low
    case "$taken ${found[*]-} " in *" $p "*) continue ;; esac
    found+=("$p")
  done
  echo "${found[@]}"
}
