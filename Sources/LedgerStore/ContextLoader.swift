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

        // Every look-up in one statement, each row tagged with the look-up it answers: a decision
        // paid eight statements' costs for eight look-ups where one does the same index scans
        // (docs/benchmarks.md, 2026-11-28, night). `version` carries the stream version, or the
        // position where rows must keep the log's order; `detail` a refund's transaction id.
        let redeemsOffer = userId != nil && evidence.entries.contains { $0.offerIdentifier != nil }
        var lookUps: SQL = """
            SELECT 0 AS part, coalesce(max(stream_version), 0) AS version, NULL::text AS type, NULL::jsonb AS payload, NULL::text AS detail
            FROM events WHERE stream_id = \(Streams.catalog)
            UNION ALL
            SELECT 1, stream_version, event_type, payload, NULL FROM events
            WHERE stream_id = ANY(\(array(transactionIds.map(Streams.transaction)))) AND stream_version <= 2
            UNION ALL
            SELECT 2, stream_version, NULL, NULL, payload->>'transaction_id' FROM events
            WHERE stream_id = ANY(\(array(transactionIds.map(Streams.refund)))) AND stream_version = 1
            UNION ALL
            (SELECT DISTINCT ON (stream_id) 3, stream_version, event_type, payload, NULL FROM events
             WHERE stream_id = ANY(\(array(originals.map(Streams.ownership)))) ORDER BY stream_id, stream_version DESC)
            UNION ALL
            SELECT 4, o.position, NULL, o.payload, NULL FROM events o
            WHERE o.event_type = 'OrderCreated' AND o.payload->>'user_id' = \(userId ?? "")
              AND NOT EXISTS (SELECT 1 FROM events f WHERE f.stream_id = o.stream_id AND f.stream_version = 2)
            UNION ALL
            SELECT 5, 0, NULL, payload, NULL FROM events
            WHERE event_type = 'OrderCreated' AND payload->>'app_account_token' = ANY(\(array(tokens)))
            UNION ALL
            SELECT 6, 0, NULL, payload, NULL FROM events WHERE stream_id = \(Streams.order(namedOrderId ?? "")) AND stream_version = 1
            """
        // The signatures the user was given, when the evidence redeems an offer (most redeems
        // none, and then nothing is asked): from the log, through its partial index by user
        // (migration 0024), since a projection could trail a purchase made right after its
        // signature.
        if redeemsOffer {
            lookUps.append("""

                UNION ALL
                SELECT 7, position, NULL, payload, NULL FROM events
                WHERE event_type = 'OfferSignatureIssued' AND payload->>'user_id' = \(userId ?? "")
                """)
        }
        // Left to itself, PostgreSQL plans the `ANY(array)` look-ups afresh on every call: a custom
        // plan for a one-element array always looks cheaper than the generic plan's guess of ten,
        // so the plan cache never switches, and planning costs more than running them
        // (docs/benchmarks.md, 'Why the code is shaped so'). Their generic plans are the same index
        // scans; this applies until the pipeline's implicit transaction ends.
        let generic: SQL = .prepared("SELECT set_config('plan_cache_mode', 'force_generic_plan', true)")
        let rows = try connection.pipeline([generic, lookUps.prepared()])[1]

        var transactionRows: [PostgresRow] = []
        var ownerRows: [PostgresRow] = []
        var openOrders: [(position: Int64, row: PostgresRow)] = []
        var tokenOrders: [PostgresRow] = []
        var namedOrders: [PostgresRow] = []
        var signatures: [(position: Int64, row: PostgresRow)] = []
        var catalogHead: Int64 = 0
        for row in rows {
            switch try row.decode(0, as: Int32.self) {
            case 0: catalogHead = try row.decode(1)
            case 1: transactionRows.append(row)
            case 2: context.refunded.insert(try row.decode(4))
            case 3: ownerRows.append(row)
            case 4: openOrders.append((try row.decode(1), row))
            case 5: tokenOrders.append(row)
            case 6: namedOrders.append(row)
            default: signatures.append((try row.decode(1), row))
            }
        }
        context.catalog = try catalogs.current(head: catalogHead, on: connection)[bundleId]
        context.transactions = try Self.transactionRecords(transactionRows, type: 2, payload: 3)
        for row in ownerRows {
            let version: Int64 = try row.decode(1)
            switch try Self.event(row, type: 2, payload: 3) {
            case .ownershipClaimed(let c): context.owners[c.originalTransactionId] = Ownership(userId: c.userId, streamVersion: version)
            case .ownershipTransferred(let t): context.owners[t.originalTransactionId] = Ownership(userId: t.toUserId, streamVersion: version)
            default: break
            }
        }
        // Orders of another app are never this decision's (one recorded before several apps
        // names none, and is the legacy app's: the only app of its day).
        func ofThisApp(_ order: OrderCreated) -> Bool { order.bundleId == nil || order.bundleId == bundleId }
        if userId != nil { context.openOrders = try orders(openOrders.sorted { $0.position < $1.position }.map(\.row)).filter(ofThisApp) }
        for order in try orders(tokenOrders) where ofThisApp(order) { context.ordersByToken[order.appAccountToken] = order }
        if namedOrderId != nil { context.namedOrder = try orders(namedOrders).first(where: ofThisApp) }
        if redeemsOffer {
            context.offerSignatures = try signatures.sorted { $0.position < $1.position }.compactMap {
                guard case .offerSignatureIssued(let issued) = try LedgerEvent(
                    type: OfferSignatureIssued.eventType, payload: Data($0.row.decode(3, as: JSONB.self).bytes))
                else { return nil }
                return issued
            }
        }
        return context
    }

    /// What each of `transactionIds` became in the ledger: its stream's first event, a
    /// delivery, a renewal or an unclaimed purchase, and the delivery that claimed the latter
    /// (read by `transactionRecords`).
    package static func transactionsQuery(_ transactionIds: [String]) -> SQL {
        .prepared("""
            SELECT event_type, payload FROM events
            WHERE stream_id = ANY(\(PostgresArray(transactionIds.map { Optional(Streams.transaction($0)) }))) AND stream_version <= 2
            """)
    }

    /// `transactionsQuery`'s rows (their event type and payload in columns `type` and
    /// `payload`), by transaction id.
    package static func transactionRecords(
        _ rows: some Sequence<PostgresRow>, type: Int = 0, payload: Int = 1
    ) throws -> [String: TransactionRecord] {
        var records: [String: TransactionRecord] = [:]
        for row in rows {
            // A stream's first event; for one first recorded unclaimed, its delivery (version 2)
            // once there is one, in whichever order the rows come.
            switch try event(row, type: type, payload: payload) {
            case .purchaseDelivered(let d): records[d.transactionId] = .delivered(d)
            case .subscriptionRenewalSeen(let r): records[r.transactionId] = .renewal(r)
            case .purchaseUnclaimed(let u): if records[u.transactionId] == nil { records[u.transactionId] = .unclaimed(u) }
            default: break
            }
        }
        return records
    }

    private static func event(_ row: PostgresRow, type: Int, payload: Int) throws -> LedgerEvent {
        try LedgerEvent(type: row.decode(type), payload: Data(row.decode(payload, as: JSONB.self).bytes))
    }

    /// Orders from the look-ups' rows (the payload in column 3).
    private func orders(_ rows: [PostgresRow]) throws -> [OrderCreated] {
        try rows.map { try LedgerJSON.decoder.decode(OrderCreated.self, from: Data($0.decode(3, as: JSONB.self).bytes)) }
    }
}
