import Foundation
import Ledger
import Postgres

/// Loads, in one connection's round trips, what the ledger recorded about the transactions,
/// orders and user one decision concerns (`PurchaseContext`). Runs on the pool's thread.
struct ContextLoader {
    let connection: Connection

    func load(
        evidence: Evidence, userId: String?, namedOrderId: String?, catalog: Catalog, configuration: LedgerConfiguration
    ) throws -> PurchaseContext {
        var context = PurchaseContext(catalog: catalog, bundleId: configuration.bundleId, transferPolicy: configuration.transferPolicy)
        let transactionIds = evidence.entries.map(\.transactionId)
        let originals = Array(Set(evidence.entries.map(\.originalTransactionId)))
        if !transactionIds.isEmpty {
            let streams = transactionIds.map { Optional(Streams.transaction($0)) }
            for row in try connection.query("""
                SELECT event_type, payload FROM events WHERE stream_id = ANY(\(PostgresArray(streams))) AND stream_version = 1
                """) {
                let event = try LedgerEvent(type: row.decode(0), payload: Data(row.decode(1, as: JSONB.self).bytes))
                switch event {
                case .purchaseDelivered(let d): context.transactions[d.transactionId] = .delivered(d)
                case .subscriptionRenewalSeen(let r): context.transactions[r.transactionId] = .renewal(r)
                default: break
                }
            }
            let refundStreams = transactionIds.map { Optional(Streams.refund($0)) }
            for row in try connection.query("""
                SELECT payload->>'transaction_id' FROM events WHERE stream_id = ANY(\(PostgresArray(refundStreams))) AND stream_version = 1
                """) {
                context.refunded.insert(try row.decode(0))
            }
            let ownerStreams = originals.map { Optional(Streams.ownership($0)) }
            for row in try connection.query("""
                SELECT DISTINCT ON (stream_id) stream_version, event_type, payload FROM events
                WHERE stream_id = ANY(\(PostgresArray(ownerStreams))) ORDER BY stream_id, stream_version DESC
                """) {
                let version: Int64 = try row.decode(0)
                switch try LedgerEvent(type: row.decode(1), payload: Data(row.decode(2, as: JSONB.self).bytes)) {
                case .ownershipClaimed(let c): context.owners[c.originalTransactionId] = Ownership(userId: c.userId, streamVersion: version)
                case .ownershipTransferred(let t): context.owners[t.originalTransactionId] = Ownership(userId: t.toUserId, streamVersion: version)
                default: break
                }
            }
        }
        if let userId {
            context.openOrders = try orders(connection.query("""
                SELECT o.payload FROM events o
                WHERE o.event_type = 'OrderCreated' AND o.payload->>'user_id' = \(userId)
                  AND NOT EXISTS (SELECT 1 FROM events f WHERE f.stream_id = o.stream_id AND f.stream_version = 2)
                ORDER BY o.position
                """))
        }
        let tokens = Array(Set(evidence.entries.compactMap(\.appAccountToken)))
        if !tokens.isEmpty {
            for order in try orders(connection.query("""
                SELECT payload FROM events WHERE event_type = 'OrderCreated'
                  AND payload->>'app_account_token' = ANY(\(PostgresArray(tokens.map { Optional($0) })))
                """)) {
                context.ordersByToken[order.appAccountToken] = order
            }
        }
        if let namedOrderId {
            context.namedOrder = try orders(connection.query("""
                SELECT payload FROM events WHERE stream_id = \(Streams.order(namedOrderId)) AND stream_version = 1
                """)).first
        }
        return context
    }

    private func orders(_ rows: PostgresRows) throws -> [OrderCreated] {
        try rows.map { try LedgerJSON.decoder.decode(OrderCreated.self, from: Data($0.decode(0, as: JSONB.self).bytes)) }
    }
}
