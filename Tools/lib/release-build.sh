# Sourced by Tools/release and Tools/bench: the scratch path of the one release build they share,
# kept outside the clone (~/.cache/purchase-ledger/build-release) so that a fresh clone on this
# machine, as CI's is, recompiles only what changed instead of every package (a release build
# from nothing takes 9 to 18 minutes on 2 cores). PL_RELEASE_SCRATCH overrides it.
pl_release_scratch() {
  echo "${PL_RELEASE_SCRATCH:-${XDG_CACHE_HOME:-$HOME/.cache}/purchase-ledger/build-release}"
}
