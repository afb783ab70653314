import Foundation
import LedgerStore
import Postgres

/// Where one endpoint stands: what `webhooks status`, `/metrics` and the console show.
public struct WebhookEndpointStatus: Sendable, Hashable {
    public var name: String
    public var url: String
    /// Every message at or before it reached the endpoint or is outstanding.
    public var position: Int64
    /// Messages not yet acknowledged: after `position`, or outstanding.
    public var backlog: Int64
    /// Of the backlog, those tried and refused (or asked for again) and those waiting behind them.
    public var outstanding: Int64
    public var delivered: Int64
    public var failedAttempts: Int64
    public var lastError: String?
    /// Milliseconds since 1970, UTC.
    public var lastErrorAtMs: Int64?
    public var lastDeliveredAtMs: Int64?
    /// The recorded time of the oldest message not yet acknowledged (how late the endpoint is).
    public var oldestWaitingAtMs: Int64?
    /// The server delivering to it now, while its lease lasts.
    public var leaseOwner: String?

    public init(
        name: String, url: String, position: Int64, backlog: Int64, outstanding: Int64, delivered: Int64, failedAttempts: Int64,
        lastError: String? = nil, lastErrorAtMs: Int64? = nil, lastDeliveredAtMs: Int64? = nil, oldestWaitingAtMs: Int64? = nil,
        leaseOwner: String? = nil
    ) {
        self.name = name
        self.url = url
        self.position = position
        self.backlog = backlog
        self.outstanding = outstanding
        self.delivered = delivered
        self.failedAttempts = failedAttempts
        self.lastError = lastError
        self.lastErrorAtMs = lastErrorAtMs
        self.lastDeliveredAtMs = lastDeliveredAtMs
        self.oldestWaitingAtMs = oldestWaitingAtMs
        self.leaseOwner = leaseOwner
    }
}

public enum WebhookStatus {
    /// Every endpoint ever configured on this database, by name.
    public static func endpoints(on connection: Connection) throws -> [WebhookEndpointStatus] {
        let rows = try connection.query("""
            SELECT e.name, e.url, e.position,
                   (SELECT count(*) FROM projection_webhook_events m WHERE m.position > e.position),
                   (SELECT count(*) FROM webhook_outstanding o WHERE o.endpoint = e.name),
                   e.delivered, e.failed_attempts, e.last_error,
                   (extract(epoch FROM e.last_error_at) * 1000)::bigint,
                   (extract(epoch FROM e.last_delivered_at) * 1000)::bigint,
                   CASE WHEN e.lease_expires_at > clock_timestamp() THEN e.lease_owner END,
                   least((SELECT min(m.position) FROM projection_webhook_events m WHERE m.position > e.position),
                         (SELECT min(o.position) FROM webhook_outstanding o WHERE o.endpoint = e.name))
            FROM webhook_endpoints e ORDER BY e.name
            """)
        var statuses: [WebhookEndpointStatus] = []
        var oldest: [Int64?] = []
        for row in rows {
            let outstanding: Int64 = try row.decode(4)
            let after: Int64 = try row.decode(3)
            statuses.append(WebhookEndpointStatus(
                name: try row.decode(0), url: try row.decode(1), position: try row.decode(2),
                backlog: after + outstanding, outstanding: outstanding, delivered: try row.decode(5),
                failedAttempts: try row.decode(6), lastError: try row.decode(7), lastErrorAtMs: try row.decode(8),
                lastDeliveredAtMs: try row.decode(9), oldestWaitingAtMs: nil, leaseOwner: try row.decode(10)))
            oldest.append(try row.decode(11))
        }
        // The oldest waiting message's time is its ledger event's, read from the log by its
        // owner (LedgerStore): this module reads the log only through the projection.
        let recorded = try LedgerReads.recordedAtMs(of: oldest.compactMap { $0 }, on: connection)
        for index in statuses.indices {
            guard let position = oldest[index] else { continue }
            statuses[index].oldestWaitingAtMs = recorded[position]
        }
        return statuses
    }
}
