import Foundation
import Metrics
import Prometheus

/// The server's metrics, through swift-metrics with a Prometheus registry of the server's own
/// (not the process-wide bootstrap, so several servers in one test process stay apart).
public final class LedgerMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    let factory: PrometheusMetricsFactory

    public init() {
        registry = PrometheusCollectorRegistry()
        factory = PrometheusMetricsFactory(registry: registry)
        // The counters without labels are there at 0 from the start: a series that appears
        // at 1 hides its first increment from rate() and increase(), and an alert on it.
        _ = Counter(label: "ledger_apple_server_api_unauthorized_total", factory: factory)
        _ = Counter(label: "ledger_deliveries_total", factory: factory)
    }

    func recordRequest(route: String, method: String, status: Int, duration: Duration) {
        let dimensions = [("route", route), ("method", method), ("status", String(status))]
        Counter(label: "ledger_http_requests_total", dimensions: dimensions, factory: factory).increment()
        Metrics.Timer(label: "ledger_http_request_duration_seconds", dimensions: [("route", route)], factory: factory)
            .recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    func recordAppleAttempt(status: String) {
        Counter(label: "ledger_apple_attempts_total", dimensions: [("status", status)], factory: factory).increment()
    }

    /// The App Store Server API refused our credentials: a configuration alarm to page on.
    func recordAppleUnauthorized() {
        Counter(label: "ledger_apple_server_api_unauthorized_total", factory: factory).increment()
    }

    func recordOutcome(_ outcome: String) {
        Counter(label: "ledger_submission_outcomes_total", dimensions: [("outcome", outcome)], factory: factory).increment()
    }

    func recordDeliveries(_ count: Int) {
        Counter(label: "ledger_deliveries_total", factory: factory).increment(by: count)
    }

    func setGauges(pending: Int, projectionLag: Int64) {
        Gauge(label: "ledger_pending_receipts", factory: factory).record(pending)
        Gauge(label: "ledger_projection_lag_events", factory: factory).record(projectionLag)
    }

    /// The Prometheus text exposition.
    public func exposition() -> String { registry.emitToString() }
}
