# Sourced by Tools/test: the Standard Webhooks Python library (standardwebhooks, PyPI), pinned,
# in a virtualenv of its own under ~/.cache/purchase-ledger as Tools/schemathesis keeps
# schemathesis. LedgerWebhooksTests runs docs/webhooks.md's Python receiver with it against what
# WebhookSigner signs; under CI=true a missing library fails that test.

# Installs the library when it is not there at this version, and exports PL_WEBHOOKS_PYTHON,
# the python that test runs (without it, the test tries python3 on PATH).
pl_webhooks_python() {
  local version=1.1.0 venv
  venv=${STANDARDWEBHOOKS_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/purchase-ledger/standardwebhooks-$version}
  if ! "$venv/bin/python" -c "import sys, importlib.metadata as m; import standardwebhooks.webhooks; sys.exit(m.version('standardwebhooks') != '$version')" 2>/dev/null; then
    command -v python3 >/dev/null 2>&1 || pl_ensure_packages python3
    python3 -m venv --help >/dev/null 2>&1 && python3 -c 'import ensurepip' 2>/dev/null || pl_ensure_packages python3-venv
    echo "installing standardwebhooks $version into $venv" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "standardwebhooks==$version"
  fi
  export PL_WEBHOOKS_PYTHON="$venv/bin/python"
}
