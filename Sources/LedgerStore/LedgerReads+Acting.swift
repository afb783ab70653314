import Foundation
import Ledger
import Postgres

/// A subscription as an act on it needs it: which period is its latest (the one an extension
/// moves), in which environment Apple keeps it, and who holds it.
public struct SubscriptionToAct: Sendable, Hashable {
    public var originalTransactionId: String
    public var productId: String
    public var environment: String
    public var latestTransactionId: String
    public var expiresAtMs: Int64?
    public var ownerUserId: String?
    /// The app it was bought in; nil when recorded before events named their app.
    public var bundleId: String? = nil
}

extension LedgerReads {
    /// From the subscriptions and ownership read models; nil when the ledger holds no such
    /// subscription.
    public func subscriptionToAct(_ originalTransactionId: String) async throws -> SubscriptionToAct? {
        try await pool.withConnection { connection in
            // The latest period: the one ending last, not upgraded away from, ties by id (as
            // `SubscriptionSummary` picks it).
            guard let row = try connection.query("""
                SELECT e.transaction_id, e.product_id, e.environment, e.expires_date_ms, o.owner_user_id,
                       coalesce(o.bundle_id, (SELECT d.payload->>'bundle_id' FROM events d
                                              WHERE d.stream_id = \(Streams.transaction(originalTransactionId)) AND d.stream_version = 1))
                FROM projection_subscription_entries e
                LEFT JOIN projection_ownership o ON o.original_transaction_id = e.original_transaction_id
                WHERE e.original_transaction_id = \(originalTransactionId)
                ORDER BY e.is_upgraded, coalesce(least(e.expires_date_ms, e.cancellation_date_ms), e.expires_date_ms, e.cancellation_date_ms) DESC NULLS LAST,
                         e.transaction_id DESC
                LIMIT 1
                """).first else { return nil }
            return SubscriptionToAct(
                originalTransactionId: originalTransactionId, productId: try row.decode(1), environment: try row.decode(2),
                latestTransactionId: try row.decode(0), expiresAtMs: try row.decode(3), ownerUserId: try row.decode(4), bundleId: try row.decode(5))
        }
    }
}

/// An owned purchase as Set App Account Token needs it: its holder and the version of its
/// ownership stream (a transfer appends expecting it), and whether it is a Family Sharing member's.
public struct OwnedPurchase: Sendable, Hashable {
    public var originalTransactionId: String
    public var productId: String
    public var kind: ProductKind
    public var environment: String
    /// The transaction that last claimed or moved it.
    public var transactionId: String
    public var ownerUserId: String
    public var streamVersion: Int64
    public var familyShared: Bool
    /// The app its ownership events name; nil when recorded before several apps.
    public var bundleId: String?
}

extension LedgerReads {
    /// The ownership stream's last event of `originalTransactionId`; nil when the ledger never
    /// recorded it as an owned product's original transaction.
    public func ownedPurchase(_ originalTransactionId: String) async throws -> OwnedPurchase? {
        let stream = Streams.ownership(originalTransactionId)
        let delivery = Streams.transaction(originalTransactionId)
        return try await pool.withConnection { connection in
            guard let row = try connection.query("""
                SELECT stream_version, event_type, payload,
                       (SELECT (payload->>'family_shared')::boolean FROM events WHERE stream_id = \(delivery) AND stream_version = 1)
                FROM events WHERE stream_id = \(stream) ORDER BY stream_version DESC LIMIT 1
                """).first else { return nil }
            let payload = Data(try row.decode(2, as: JSONB.self).bytes)
            let version: Int64 = try row.decode(0)
            let shared: Bool? = try row.decode(3)
            switch try LedgerEvent(type: try row.decode(1), payload: payload) {
            case .ownershipClaimed(let c):
                return OwnedPurchase(
                    originalTransactionId: originalTransactionId, productId: c.productId, kind: c.kind, environment: c.environment,
                    transactionId: c.transactionId, ownerUserId: c.userId, streamVersion: version, familyShared: shared ?? false,
                    bundleId: c.bundleId)
            case .ownershipTransferred(let t):
                return OwnedPurchase(
                    originalTransactionId: originalTransactionId, productId: t.productId, kind: t.kind, environment: t.environment,
                    transactionId: t.transactionId, ownerUserId: t.toUserId, streamVersion: version, familyShared: shared ?? false,
                    bundleId: t.bundleId)
            default:
                return nil
            }
        }
    }

    /// The newest `AppAccountTokenSet` recorded on `originalTransactionId` (nil: none yet) and
    /// its stream's version, which the next act appends expecting: the same token set again
    /// for the same owner answers this act, and two servers setting one at once cannot both
    /// record.
    public func lastAppAccountTokenAct(_ originalTransactionId: String) async throws -> (act: AppAccountTokenSet?, version: Int64) {
        try await pool.withConnection { connection in
            guard let row = try connection.query("""
                SELECT stream_version, payload FROM events WHERE stream_id = \(Streams.appAccountToken(originalTransactionId))
                ORDER BY stream_version DESC LIMIT 1
                """).first else { return (nil, 0) }
            let act = try LedgerJSON.decoder.decode(AppAccountTokenSet.self, from: Data(row.decode(1, as: JSONB.self).bytes))
            return (act, try row.decode(0))
        }
    }

    /// The mass extensions of `productId` in `environment` recorded as requested and not yet
    /// completed (or refused), oldest first: a run cut off after asking Apple left one, which
    /// the next run with the same request follows instead of asking Apple for a second.
    public func unfinishedMassExtensions(productId: String, environment: String) async throws -> [MassRenewalExtensionRequested] {
        try await pool.withConnection { connection in
            try connection.query("""
                SELECT r.payload FROM events r
                WHERE r.event_type = 'MassRenewalExtensionRequested'
                  AND r.payload->>'product_id' = \(productId) AND r.payload->>'environment' = \(environment)
                  AND NOT EXISTS (SELECT 1 FROM events c WHERE c.stream_id = r.stream_id AND c.stream_version = 2)
                ORDER BY r.position
                """).map { try LedgerJSON.decoder.decode(MassRenewalExtensionRequested.self, from: Data($0.decode(0, as: JSONB.self).bytes)) }
        }
    }

    /// The user an app account token was issued to (the `OrderCreated` that carries it).
    public func userOfAppAccountToken(_ token: String) async throws -> String? {
        try await pool.withConnection { connection in
            try connection.query("""
                SELECT payload->>'user_id' FROM events WHERE event_type = 'OrderCreated' AND payload->>'app_account_token' = \(token) LIMIT 1
                """).first?.decode(0)
        }
    }
}

extension LedgerReads {
    /// A delivered transaction not yet finished with Apple.
    public struct UnfinishedDelivery: Sendable, Hashable {
        public var position: Int64
        public var transactionId: String
        public var environment: String
        /// The app it was delivered in; nil when recorded before events named their app.
        public var bundleId: String? = nil
    }

    /// Deliveries and renewals after `position` of the environments Apple's Server API serves,
    /// without their `Streams.transactionFinished` stream, oldest first.
    public func unfinishedDeliveries(after position: Int64, limit: Int = 100) async throws -> [UnfinishedDelivery] {
        let finished = Streams.transactionFinished("")
        return try await pool.withConnection { connection in
            try connection.query(.prepared("""
                SELECT d.position, d.payload->>'transaction_id', d.payload->>'environment', d.payload->>'bundle_id' FROM events d
                WHERE d.event_type IN ('PurchaseDelivered', 'SubscriptionRenewalSeen') AND d.position > \(position)
                  AND d.payload->>'environment' IN ('Production', 'Sandbox')
                  AND NOT EXISTS (SELECT 1 FROM events f WHERE f.stream_id = \(finished) || (d.payload->>'transaction_id') AND f.stream_version = 1)
                ORDER BY d.position LIMIT \(Int64(limit))
                """)).map {
                    UnfinishedDelivery(position: try $0.decode(0), transactionId: try $0.decode(1), environment: try $0.decode(2), bundleId: try $0.decode(3))
                }
        }
    }
}

extension LedgerReads {
    /// The app account token of the user's latest order (nil: they never ordered).
    public func latestAppAccountToken(userId: String) async throws -> String? {
        try await pool.withConnection { connection in
            try connection.query("""
                SELECT payload->>'app_account_token' FROM events
                WHERE event_type = 'OrderCreated' AND payload->>'user_id' = \(userId) ORDER BY position DESC LIMIT 1
                """).first?.decode(0)
        }
    }
}
