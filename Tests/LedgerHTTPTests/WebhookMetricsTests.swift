@testable import LedgerHTTP
import LedgerWebhooks
import Testing

/// The webhook endpoints' lines of `/metrics`, written from statuses alone: one family per
/// figure with its HELP and TYPE once, a sample per endpoint, label values escaped as the
/// Prometheus text format wants, ages from the given now.
@Suite struct WebhookMetricsTests {
    static let now: Int64 = 1_764_000_000_000

    static let failing = WebhookEndpointStatus(
        name: "orders", url: "http://127.0.0.1:9/hook", position: 40, backlog: 7, outstanding: 2, delivered: 33, failedAttempts: 5,
        lastError: "HTTP 500", lastErrorAtMs: 1_763_999_990_250, lastDeliveredAtMs: 1_763_999_000_000,
        oldestWaitingAtMs: now - 90_500, leaseOwner: "host/1/abcd")
    static let healthy = WebhookEndpointStatus(
        name: "ana\"ly\\tics\nx", url: "https://example.com/in", position: 40, backlog: 0, outstanding: 0, delivered: 40, failedAttempts: 0)

    static func lines(_ text: String) -> [String] { text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }

    @Test("each family's HELP and TYPE come once, before a sample per endpoint")
    func helpAndTypeOnce() {
        let text = WebhookMetrics.text([Self.failing, Self.healthy], nowMs: Self.now)
        #expect(text.hasSuffix("\n"))
        let lines = Self.lines(text)
        for (name, type) in [
            ("ledger_webhook_backlog", "gauge"), ("ledger_webhook_outstanding", "gauge"),
            ("ledger_webhook_delivered_total", "counter"), ("ledger_webhook_failed_attempts_total", "counter"),
            ("ledger_webhook_oldest_waiting_seconds", "gauge"), ("ledger_webhook_last_error_timestamp_seconds", "gauge"),
        ] {
            #expect(lines.filter { $0.hasPrefix("# HELP \(name) ") }.count == 1, "\(name)")
            #expect(lines.filter { $0 == "# TYPE \(name) \(type)" }.count == 1, "\(name)")
            // The family's samples follow its TYPE line, together.
            let typeLine = lines.firstIndex(of: "# TYPE \(name) \(type)")
            let samples = lines.indices.filter { lines[$0].hasPrefix(name + "{") }
            // Both endpoints, but only the failing one has a last error's time.
            #expect(samples.count == (name == "ledger_webhook_last_error_timestamp_seconds" ? 1 : 2), "\(name)")
            if let typeLine, let first = samples.first {
                #expect(first == typeLine + 1, "\(name)")
                #expect(samples == Array(first..<(first + samples.count)), "\(name)")
            }
        }
        #expect(lines.contains("ledger_webhook_backlog{endpoint=\"orders\"} 7"))
        #expect(lines.contains("ledger_webhook_outstanding{endpoint=\"orders\"} 2"))
        #expect(lines.contains("ledger_webhook_delivered_total{endpoint=\"orders\"} 33"))
        #expect(lines.contains("ledger_webhook_failed_attempts_total{endpoint=\"orders\"} 5"))
        #expect(lines.filter { $0.hasPrefix("ledger_webhook_backlog{") }.count == 2)
    }

    @Test("label values escape backslash, double quote and line feed")
    func labelsEscaped() {
        let text = WebhookMetrics.text([Self.healthy], nowMs: Self.now)
        #expect(text.contains("ledger_webhook_backlog{endpoint=\"ana\\\"ly\\\\tics\\nx\"} 0\n"), "\(text)")
        #expect(text.contains("ledger_webhook_delivered_total{endpoint=\"ana\\\"ly\\\\tics\\nx\"} 40\n"))
        // The raw line feed never reaches the output: every line is a comment or a sample.
        for line in Self.lines(text) where !line.isEmpty {
            #expect(line.hasPrefix("# ") || line.hasPrefix("ledger_webhook_"), "\(line)")
        }
        #expect(WebhookMetrics.labelValue("a\r\nb") == "a\r\\nb")
    }

    @Test("oldest waiting seconds count from nowMs, 0 when nothing waits")
    func oldestWaiting() {
        let text = WebhookMetrics.text([Self.failing, Self.healthy], nowMs: Self.now)
        let lines = Self.lines(text)
        #expect(lines.contains("ledger_webhook_oldest_waiting_seconds{endpoint=\"orders\"} 90.5"), "\(text)")
        #expect(lines.contains("ledger_webhook_oldest_waiting_seconds{endpoint=\"ana\\\"ly\\\\tics\\nx\"} 0"))
        // A message recorded after the ledger's now (clocks apart) is not a negative age.
        var early = Self.failing
        early.oldestWaitingAtMs = Self.now + 5_000
        #expect(Self.lines(WebhookMetrics.text([early], nowMs: Self.now)).contains("ledger_webhook_oldest_waiting_seconds{endpoint=\"orders\"} 0"))
        early.oldestWaitingAtMs = Self.now - 3_000
        #expect(Self.lines(WebhookMetrics.text([early], nowMs: Self.now)).contains("ledger_webhook_oldest_waiting_seconds{endpoint=\"orders\"} 3"))
    }

    @Test("the last error's time is there only for an endpoint that has failed")
    func lastErrorOmittedWhenNone() {
        let both = Self.lines(WebhookMetrics.text([Self.failing, Self.healthy], nowMs: Self.now))
        #expect(both.contains("ledger_webhook_last_error_timestamp_seconds{endpoint=\"orders\"} 1763999990.25"))
        #expect(both.filter { $0.hasPrefix("ledger_webhook_last_error_timestamp_seconds{") }.count == 1)

        let text = WebhookMetrics.text([Self.healthy], nowMs: Self.now)
        #expect(!text.contains("ledger_webhook_last_error_timestamp_seconds"), "no sample, and no HELP or TYPE for none: \(text)")
        #expect(text.contains("# TYPE ledger_webhook_backlog gauge\n"))
    }

    @Test("no endpoint, no lines")
    func noEndpoints() {
        #expect(WebhookMetrics.text([], nowMs: Self.now) == "")
    }

    @Test("milliseconds as exact decimal seconds")
    func seconds() {
        #expect(WebhookMetrics.seconds(0) == "0")
        #expect(WebhookMetrics.seconds(1_500) == "1.5")
        #expect(WebhookMetrics.seconds(1_005) == "1.005")
        #expect(WebhookMetrics.seconds(1_764_000_000_120) == "1764000000.12")
        #expect(WebhookMetrics.seconds(-250) == "-0.25")
    }
}
