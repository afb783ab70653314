import LedgerWebhooks
import Postgres
import Primitives

/// The webhook endpoints' standing in `/metrics` (docs/webhooks.md: a failing endpoint shows
/// its backlog and last error), one series per endpoint labelled `endpoint="NAME"`. Read from the
/// database at scrape time, so every server of a deployment reports every endpoint the same,
/// whichever holds its lease; written here as Prometheus text beside the registry's exposition.
enum WebhookMetrics {
    /// The lines for a scrape: the endpoints read on a connection of `pool`, ages taken from
    /// `clock` (the ledger's time). Empty when the status cannot be read (the database is down):
    /// the rest of the scrape, the process's own counters, still answers, and Prometheus sees the
    /// webhook series go missing instead of the whole target failing while it is most needed.
    static func scrape(_ pool: ConnectionPool, clock: WallClock) async -> String {
        guard let statuses = try? await pool.withConnection({ try WebhookStatus.endpoints(on: $0) }) else { return "" }
        return text(statuses, nowMs: clock())
    }

    /// Prometheus text (format 0.0.4) for `statuses`: each family's `# HELP` and `# TYPE` once,
    /// then a sample per endpoint; a family with no sample (no endpoint, or none with an error)
    /// is left out whole.
    static func text(_ statuses: [WebhookEndpointStatus], nowMs: Int64) -> String {
        var out = ""
        for family in families {
            let samples = statuses.compactMap { status in
                family.value(status, nowMs).map { "\(family.name){endpoint=\"\(labelValue(status.name))\"} \($0)\n" }
            }
            guard !samples.isEmpty else { continue }
            out += "# HELP \(family.name) \(family.help)\n# TYPE \(family.name) \(family.type)\n"
            out += samples.joined()
        }
        return out
    }

    private struct Family {
        var name: String
        var type: String
        var help: String
        /// The sample's value, nil: no sample for this endpoint.
        var value: (WebhookEndpointStatus, _ nowMs: Int64) -> String?
    }

    /// Computed, not stored: `Family` holds a closure, and a stored static must be Sendable.
    private static var families: [Family] {
        [
            Family(
                name: "ledger_webhook_backlog", type: "gauge",
                help: "Messages the endpoint has not acknowledged: after its position, or outstanding.",
                value: { status, _ in String(status.backlog) }),
            Family(
                name: "ledger_webhook_outstanding", type: "gauge",
                help: "Of the backlog, messages tried and refused, asked for again, or waiting behind an earlier one of their user.",
                value: { status, _ in String(status.outstanding) }),
            Family(
                name: "ledger_webhook_delivered_total", type: "counter",
                help: "Messages the endpoint acknowledged with a 2xx.",
                value: { status, _ in String(status.delivered) }),
            Family(
                name: "ledger_webhook_failed_attempts_total", type: "counter",
                help: "Deliveries to the endpoint that failed (non-2xx, time-out or refused connection).",
                value: { status, _ in String(status.failedAttempts) }),
            Family(
                name: "ledger_webhook_oldest_waiting_seconds", type: "gauge",
                help: "How long ago the oldest message the endpoint has not acknowledged was recorded; 0 when none waits.",
                value: { status, nowMs in Self.seconds(status.oldestWaitingAtMs.map { max(0, nowMs - $0) } ?? 0) }),
            Family(
                name: "ledger_webhook_last_error_timestamp_seconds", type: "gauge",
                help: "When the endpoint's last delivery failed, in seconds since 1970 (absent when none has).",
                value: { status, _ in status.lastErrorAtMs.map(Self.seconds) }),
        ]
    }

    /// A label value as Prometheus text writes it: backslash, double quote and line feed escaped.
    static func labelValue(_ text: String) -> String {
        // By scalar, not by Character: "\r\n" is one Character, and its line feed must go too.
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out.append(contentsOf: "\\\\".unicodeScalars)
            case "\"": out.append(contentsOf: "\\\"".unicodeScalars)
            case "\n": out.append(contentsOf: "\\n".unicodeScalars)
            default: out.append(scalar)
            }
        }
        return String(out)
    }

    /// Milliseconds as decimal seconds, exactly (no binary floating point): 1500 → "1.5".
    static func seconds(_ milliseconds: Int64) -> String {
        let sign = milliseconds < 0 ? "-" : ""
        let magnitude = milliseconds.magnitude
        let (whole, fraction) = magnitude.quotientAndRemainder(dividingBy: 1000)
        guard fraction != 0 else { return sign + String(whole) }
        var digits = String(fraction)
        while digits.count < 3 { digits = "0" + digits }
        while digits.hasSuffix("0") { digits.removeLast() }
        return sign + String(whole) + "." + digits
    }
}
