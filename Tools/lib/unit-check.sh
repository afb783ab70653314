# The packaged systemd unit, checked the way systemd rates a service's hardening: sourced by
# Tools/test (and Tools/release), not executed.

# Fails unless systemd-analyze security --offline=true rates the unit's overall exposure 2.0 or
# lower (--threshold=20: the exposure times ten), and unless systemd-analyze verify finds no
# error in it other than the binary not being installed on this machine. Prints the rating.
pl_unit_check() { # [UNIT]
  local unit=${1:-"$(dirname "${BASH_SOURCE[0]}")/../../packaging/purchase-ledger.service"} out status=0
  command -v systemd-analyze >/dev/null 2>&1 || { echo "unit check: systemd-analyze is missing (Debian's systemd package)" >&2; return 1; }
  out=$(systemd-analyze security --offline=true --threshold=20 --no-pager "$unit" 2>&1) || status=$?
  if [ "$status" -ne 0 ]; then
    echo "$out" >&2
    echo "unit check: $unit is rated above 2.0 (systemd-analyze security --offline=true --threshold=20)" >&2
    return 1
  fi
  echo "unit check: $(echo "$out" | grep 'Overall exposure level' | sed 's/^→ *//')" >&2
  # Syntax: unknown keys and bad values are errors; the binary is absent outside the package.
  out=$(systemd-analyze verify --man=no "$unit" 2>&1 | grep -v 'is not executable: No such file or directory' || true)
  if [ -n "$out" ]; then
    echo "$out" >&2
    echo "unit check: systemd-analyze verify complains about $unit" >&2
    return 1
  fi
}
