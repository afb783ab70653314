# Sourced by Tools/test: the real server, on the throwaway cluster, checked by schemathesis over
# the OpenAPI document it serves (Tools/schemathesis), once per token scope. The simulator and the
# server listen on ports of the tools' range (Tools/lib/ports.sh), never a fixed one.

# shellcheck source=Tools/lib/ports.sh
. "$(dirname "${BASH_SOURCE[0]}")/ports.sh"

pl_api_check() {
  local bin work sim srv db url tokens i ports simport srvport
  # shellcheck disable=SC2086 # the range is two words
  pl_ports_check_range $PL_PORTS_TOOLS "the tools' servers" || return 1
  # shellcheck disable=SC2086
  ports=$(pl_free_ports $PL_PORTS_TOOLS 2) || return 1
  read -r simport srvport <<<"$ports"
  bin="$(swift build --show-bin-path)/purchase-ledger"
  work=$(mktemp -d)
  db="api_check_$$"
  "$PL_PGBIN/psql" -X -q -d "$DATABASE_URL" -c "CREATE DATABASE $db"
  url="${DATABASE_URL/dbname=postgres/dbname=$db}"
  tokens="app-token-0123456789:app,finance-token-0123456789:finance,support-token-0123456789:support"
  cat >"$work/catalog.json" <<'JSON'
{"products": [
  {"product_id": "com.example.coins100", "kind": "consumable", "grants": {"coins": 100}, "price_minor": 99, "currency": "USD"},
  {"product_id": "com.example.removeads", "kind": "non_consumable", "price_minor": 299, "currency": "USD"},
  {"product_id": "com.example.pro.monthly", "kind": "auto_renewable", "price_minor": 499, "currency": "USD"}
]}
JSON
  DATABASE_URL="$url" "$bin" migrate >&2
  # An App Store Server API key of the check's own, which the simulator verifies every token
  # against: the routes that ask Apple answer from the simulator, as they would from Apple.
  openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out "$work/key.p8"
  export APPLE_ISSUER_ID=api-check-issuer APPLE_KEY_ID=APICHECK01 APPLE_PRIVATE_KEY="$work/key.p8" APPLE_BUNDLE_ID=com.example.app
  "$(dirname "$bin")/apple-simulator" --address 127.0.0.1:$simport --root-certificate-out "$work/root.der" >"$work/simulator.log" 2>&1 &
  sim=$!
  # serve reads the simulator's root at start: wait until it is written.
  for i in $(seq 300); do
    [ -s "$work/root.der" ] && break
    sleep 0.2
  done
  DATABASE_URL="$url" LEDGER_API_TOKENS="$tokens" APPLE_BUNDLE_ID=com.example.app LEDGER_CATALOG="$work/catalog.json" \
    APPLE_VERIFY_RECEIPT_PRODUCTION_URL=http://127.0.0.1:$simport/production/verifyReceipt \
    APPLE_VERIFY_RECEIPT_SANDBOX_URL=http://127.0.0.1:$simport/sandbox/verifyReceipt \
    APPLE_ROOT_CERTIFICATES="$work/root.der" APPLE_SERVER_API_URL=http://127.0.0.1:$simport LEDGER_RECONCILE_INTERVAL=0 LOG_LEVEL=warning \
    "$bin" serve --address 127.0.0.1:$srvport >"$work/server.log" 2>&1 &
  srv=$!
  for i in $(seq 300); do
    curl -fsS http://127.0.0.1:$srvport/healthz >/dev/null 2>&1 && break
    sleep 0.2
  done
  local status=0
  LEDGER_URL=http://127.0.0.1:$srvport LEDGER_API_TOKENS="$tokens" Tools/schemathesis || status=$?
  kill -TERM "$srv" "$sim" 2>/dev/null || true
  wait "$srv" "$sim" 2>/dev/null || true
  if [ "$status" -ne 0 ]; then
    echo "schemathesis found failures; the server's log:" >&2
    tail -50 "$work/server.log" >&2
  fi
  unset APPLE_ISSUER_ID APPLE_KEY_ID APPLE_PRIVATE_KEY APPLE_BUNDLE_ID
  rm -rf "$work"
  return "$status"
}
