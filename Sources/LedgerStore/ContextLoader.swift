import Foundation
import Ledger
import Postgres

/// Loads what the ledger recorded about the transactions, orders and user one decision concerns
/// (`PurchaseContext`). Its look-ups go to the server together (pipeline mode): one round trip
/// per decision, not one per look-up. Runs on the pool's thread.
package struct ContextLoader {
    let connection: Connection

    package init(connection: Connection) {
        self.connection = connection
    }

    package func load(
        evidence: Evidence, userId: String?, namedOrderId: String?, catalogs: CatalogStore, bundleId: String, transferPolicy: TransferPolicy
    ) throws -> PurchaseContext {
        var context = PurchaseContext(catalog: Catalog(), bundleId: bundleId, transferPolicy: transferPolicy)
        let transactionIds = evidence.entries.map(\.transactionId)
        let originals = Array(Set(evidence.entries.map(\.originalTransactionId)))
        let tokens = Array(Set(evidence.entries.compactMap(\.appAccountToken)))
        func array(_ values: [String]) -> PostgresArray { PostgresArray(values.map { Optional($0) }) }

        let transactions = Self.transactionsQuery(transactionIds)
        let refunds: SQL = .prepared("""
            SELECT payload->>'transaction_id' FROM events
            WHERE stream_id = ANY(\(array(transactionIds.map(Streams.refund)))) AND stream_version = 1
            """)
        let owners: SQL = .prepared("""
            SELECT DISTINCT ON (stream_id) stream_version, event_type, payload FROM events
            WHERE stream_id = ANY(\(array(originals.map(Streams.ownership)))) ORDER BY stream_id, stream_version DESC
            """)
        let openOrders: SQL = .prepared("""
            SELECT o.payload FROM events o
            WHERE o.event_type = 'OrderCreated' AND o.payload->>'user_id' = \(userId ?? "")
              AND NOT EXISTS (SELECT 1 FROM events f WHERE f.stream_id = o.stream_id AND f.stream_version = 2)
            ORDER BY o.position
            """)
        let byToken: SQL = .prepared("""
            SELECT payload FROM events WHERE event_type = 'OrderCreated' AND payload->>'app_account_token' = ANY(\(array(tokens)))
            """)
        let named: SQL = .prepared("""
            SELECT payload FROM events WHERE stream_id = \(Streams.order(namedOrderId ?? "")) AND stream_version = 1
            """)
        // Left to itself, PostgreSQL plans the `ANY(array)` look-ups afresh on every call: a custom
        // plan for a one-element array always looks cheaper than the generic plan's guess of ten,
        // so the plan cache never switches, and planning costs more than running them
        // (docs/benchmarks.md, 'Why the code is shaped so'). Their generic plans are the same index
        // scans; this applies until the pipeline's implicit transaction ends.
        let generic: SQL = .prepared("SELECT set_config('plan_cache_mode', 'force_generic_plan', true)")
        // The signatures the user was given, when the evidence redeems an offer (most redeems
        // none, and then nothing is asked): from the log, through its partial index by user
        // (migration 0024), since a projection could trail a purchase made right after its
        // signature.
        let redeemsOffer = userId != nil && evidence.entries.contains { $0.offerIdentifier != nil }
        var statements = [generic, CatalogStore.headQuery, transactions, refunds, owners, openOrders, byToken, named]
        if redeemsOffer {
            statements.append(.prepared("""
                SELECT payload FROM events
                WHERE event_type = 'OfferSignatureIssued' AND payload->>'user_id' = \(userId ?? "") ORDER BY position
                """))
        }
        let sent = try connection.pipeline(statements)
        context.catalog = try catalogs.current(head: sent[1][0].decode(0), on: connection)
        let results = Array(sent.dropFirst(2))

        context.transactions = try Self.transactionRecords(results[0])
        for row in results[1] { context.refunded.insert(try row.decode(0)) }
        for row in results[2] {
            let version: Int64 = try row.decode(0)
            switch try Self.event(row, type: 1, payload: 2) {
            case .ownershipClaimed(let c): context.owners[c.originalTransactionId] = Ownership(userId: c.userId, streamVersion: version)
            case .ownershipTransferred(let t): context.owners[t.originalTransactionId] = Ownership(userId: t.toUserId, streamVersion: version)
            default: break
            }
        }
        if userId != nil { context.openOrders = try orders(results[3]) }
        for order in try orders(results[4]) { context.ordersByToken[order.appAccountToken] = order }
        if namedOrderId != nil { context.namedOrder = try orders(results[5]).first }
        if redeemsOffer {
            context.offerSignatures = try results[6].compactMap {
                guard case .offerSignatureIssued(let issued) = try LedgerEvent(type: OfferSignatureIssued.eventType, payload: Data($0.decode(0, as: JSONB.self).bytes))
                else { return nil }
                return issued
            }
        }
        return context
    }

    /// What each of `transactionIds` became in the ledger: its stream's first event, a
    /// delivery or a renewal (read by `transactionRecords`).
    package static func transactionsQuery(_ transactionIds: [String]) -> SQL {
        .prepared("""
            SELECT event_type, payload FROM events
            WHERE stream_id = ANY(\(PostgresArray(transactionIds.map { Optional(Streams.transaction($0)) }))) AND stream_version = 1
            """)
    }

    /// `transactionsQuery`'s rows, by transaction id.
    package static func transactionRecords(_ rows: PostgresRows) throws -> [String: TransactionRecord] {
        var records: [String: TransactionRecord] = [:]
        for row in rows {
            switch try event(row, type: 0, payload: 1) {
            case .purchaseDelivered(let d): records[d.transactionId] = .delivered(d)
            case .subscriptionRenewalSeen(let r): records[r.transactionId] = .renewal(r)
            default: break
            }
        }
        return records
    }

    private static func event(_ row: PostgresRow, type: Int, payload: Int) throws -> LedgerEvent {
        try LedgerEvent(type: row.decode(type), payload: Data(row.decode(payload, as: JSONB.self).bytes))
    }

    private func orders(_ rows: PostgresRows) throws -> [OrderCreated] {
        try rows.map { try LedgerJSON.decoder.decode(OrderCreated.self, from: Data($0.decode(0, as: JSONB.self).bytes)) }
    }
}
