# Sourced by Tools/test: promtool, for the test that runs `promtool check rules` and `promtool
# test rules` on deploy/prometheus (PrometheusRulesTests).
#
# Debian's prometheus package ships it, but installing that package pulls a dozen JavaScript
# packages for the web UI, creates a system user and starts a Prometheus server from its init
# script. Only its promtool (a static Go binary that needs libc alone) is taken: the package is
# fetched with `apt-get download` and the one file extracted under ~/.cache/purchase-ledger,
# keyed by the package's version. Nothing is installed, nothing starts, and a later run reuses
# the copy without the network.

# Exports PL_PROMTOOL (the binary the test runs) and puts its folder first on PATH; a promtool
# already on PATH (the prometheus package installed) is used as it is.
pl_promtool() {
  local cache version dir work
  if command -v promtool >/dev/null 2>&1; then
    PL_PROMTOOL=$(command -v promtool)
    export PL_PROMTOOL
    return 0
  fi
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/purchase-ledger
  version=$(_pl_promtool_candidate)
  if [ -z "$version" ]; then
    apt-get update -qq
    version=$(_pl_promtool_candidate)
  fi
  [ -n "$version" ] || { echo "pl_promtool: apt knows no prometheus package" >&2; return 1; }
  dir="$cache/promtool-$(printf '%s' "$version" | tr -c 'A-Za-z0-9.+~-' '_')"
  if ! "$dir/usr/bin/promtool" --version >/dev/null 2>&1; then
    echo "extracting promtool from Debian's prometheus $version into $dir" >&2
    work=$(mktemp -d /tmp/purchase-ledger-promtool.XXXXXX)
    # As root, apt hands the download to its _apt user, which must be able to write here.
    if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then chown _apt "$work"; fi
    # Lists older than the archive name a file it no longer has: refresh them once and retry.
    (cd "$work" && apt-get download -qq "prometheus=$version" >/dev/null 2>&1) \
      || { apt-get update -qq && (cd "$work" && apt-get download -qq "prometheus=$(_pl_promtool_candidate)" >/dev/null); } \
      || { rm -rf "$work"; echo "pl_promtool: could not download Debian's prometheus package" >&2; return 1; }
    rm -rf "$dir.partial"
    mkdir -p "$dir.partial"
    dpkg-deb --fsys-tarfile "$work"/prometheus_*.deb | tar -x -C "$dir.partial" ./usr/bin/promtool \
      || { rm -rf "$work" "$dir.partial"; echo "pl_promtool: the package holds no usr/bin/promtool" >&2; return 1; }
    rm -rf "$work" "$dir"
    mv "$dir.partial" "$dir"
  fi
  PATH="$dir/usr/bin:$PATH"
  PL_PROMTOOL="$dir/usr/bin/promtool"
  export PATH PL_PROMTOOL
}

# The version of prometheus apt would install; empty when its lists do not name one.
_pl_promtool_candidate() {
  { apt-cache policy prometheus 2>/dev/null || true; } | awk '$1 == "Candidate:" && $2 != "(none)" { print $2 }'
}
