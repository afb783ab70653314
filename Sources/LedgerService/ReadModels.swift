import Foundation
import Ledger
import Postgres

/// `GET /v1/users/{id}`.
public struct UserView: Sendable, Hashable, Codable {
    public struct Entitlement: Sendable, Hashable, Codable {
        public var productId: String
        public var originalTransactionId: String
        public var kind: String
        public var active: Bool
        /// ISO 8601, UTC; nil for products that do not expire.
        public var expiresAt: String?
    }

    public var userId: String
    public var balances: [String: Int64]
    public var entitlements: [Entitlement]
    /// The Apple accounts that paid for anything this user held (CONTRACT.md names).
    public var appleAccounts: [String]
}

/// `GET /v1/subscriptions/{original_transaction_id}`.
public struct SubscriptionView: Sendable, Hashable, Codable {
    public var originalTransactionId: String
    public var productId: String
    public var ownerUserId: String
    public var status: String
    public var expiresAt: String?
    public var autoRenew: Bool?
    public var inTrial: Bool
    public var environment: String
}

/// Reads the projections. Reads wait until the projections have applied the log as it stood
/// when the read began, so a caller reads its own writes (README "Design").
public struct ReadModels: Sendable {
    /// The primary's pool: the log's head, and reads when no replica is set or it lags.
    let pool: ConnectionPool
    let runner: ProjectionRunner
    let timeout: Duration
    let clock: @Sendable () -> Int64
    /// Standbys serving the reads (`DATABASE_READ_URL`), when set.
    public let replica: ReplicaReads?

    public init(runner: ProjectionRunner, timeout: Duration, clock: @escaping @Sendable () -> Int64, replica: ReplicaReads? = nil) {
        self.pool = runner.store.pool
        self.runner = runner
        self.timeout = timeout
        self.clock = clock
        self.replica = replica
    }

    /// Where to read the projections from, once they hold the log as it stood at this call (so
    /// a caller reads its own writes, and everyone's before them): the primary has applied the
    /// head; a replica is used once it has replayed the primary's WAL position taken after that,
    /// waiting up to its lag limit, else the primary answers.
    func consistentPool() async throws -> ConnectionPool {
        try await runner.waitUntilApplied(try await runner.store.headPosition(), timeout: timeout)
        guard let replica else { return pool }
        return try await replica.pool(after: try await ReplicaReads.currentLSN(on: pool), primary: pool)
    }

    public func user(_ userId: String) async throws -> UserView {
        try await mappingDatabaseErrors {
            let pool = try await consistentPool()
            let now = clock()
            return try await pool.withConnection { connection in
                var balances: [String: Int64] = [:]
                for row in try connection.query("SELECT unit, amount FROM projection_balances WHERE user_id = \(userId)") {
                    balances[try row.decode(0)] = try row.decode(1)
                }
                let owned = try connection.query("""
                    SELECT original_transaction_id, product_id, kind, revoked_at_ms FROM projection_entitlements
                    WHERE user_id = \(userId) ORDER BY original_transaction_id
                    """).map { row in
                    (original: try row.decode(0, as: String.self), product: try row.decode(1, as: String.self),
                     kind: try row.decode(2, as: String.self), revokedAt: try row.decode(3, as: Int64?.self))
                }
                // Every subscription's state in two queries, however many the user holds.
                let summaries = try Self.summaries(
                    of: owned.filter { $0.kind == ProductKind.autoRenewable.rawValue }.map(\.original), on: connection, now: now)
                let entitlements = owned.map { item -> UserView.Entitlement in
                    var active = item.revokedAt.map { $0 > now } ?? true
                    var expires: Int64?
                    var product = item.product
                    if item.kind == ProductKind.autoRenewable.rawValue {
                        let summary = summaries[item.original]
                        active = summary.map { [.active, .inGracePeriod].contains($0.status) } ?? false
                        expires = summary?.expiresAtMs
                        // After an upgrade or downgrade the plan is the subscription's current one.
                        product = summary?.productId ?? product
                    }
                    return .init(
                        productId: product, originalTransactionId: item.original, kind: item.kind, active: active,
                        expiresAt: expires.map(Timestamps.iso8601))
                }
                return UserView(
                    userId: userId, balances: balances, entitlements: entitlements,
                    appleAccounts: try Self.appleAccounts(of: userId, on: connection))
            }
        }
    }

    /// Nil when the ledger holds no such subscription.
    public func subscription(_ originalTransactionId: String) async throws -> SubscriptionView? {
        try await mappingDatabaseErrors {
            let pool = try await consistentPool()
            let now = clock()
            return try await pool.withConnection { connection in
                guard let owner = try connection.query("""
                    SELECT user_id, environment FROM projection_entitlements
                    WHERE original_transaction_id = \(originalTransactionId) AND kind = 'auto_renewable'
                    """).first,
                    let summary = try Self.summary(originalTransactionId, on: connection, now: now)
                else { return nil }
                return SubscriptionView(
                    originalTransactionId: originalTransactionId, productId: summary.productId, ownerUserId: try owner.decode(0),
                    status: summary.status.rawValue, expiresAt: summary.expiresAtMs.map(Timestamps.iso8601), autoRenew: summary.autoRenew,
                    inTrial: summary.inTrial, environment: try owner.decode(1))
            }
        }
    }

    static func summary(_ original: String, on connection: Connection, now: Int64) throws -> SubscriptionSummary? {
        try summaries(of: [original], on: connection, now: now)[original]
    }

    /// The summaries of several subscriptions in two queries; absent ones are left out.
    static func summaries(of originals: [String], on connection: Connection, now: Int64) throws -> [String: SubscriptionSummary] {
        let ids = PostgresArray(originals.map(Optional.some))
        var entries: [String: [SubscriptionEntry]] = [:]
        for row in try connection.query(.prepared("""
            SELECT original_transaction_id, transaction_id, product_id, purchase_date_ms, expires_date_ms, cancellation_date_ms,
                   is_trial, is_upgraded
            FROM projection_subscription_entries WHERE original_transaction_id = ANY(\(ids)::text[])
            """)) {
            entries[try row.decode(0), default: []].append(SubscriptionEntry(
                transactionId: try row.decode(1), productId: try row.decode(2), purchaseDateMs: try row.decode(3),
                expiresDateMs: try row.decode(4), cancellationDateMs: try row.decode(5), isTrial: try row.decode(6),
                isUpgraded: try row.decode(7)))
        }
        var renewals: [String: RenewalObservation] = [:]
        for row in try connection.query(.prepared("""
            SELECT original_transaction_id, observed_at_ms, auto_renew, auto_renew_product_id, in_billing_retry, grace_period_expires_ms
            FROM projection_subscription_renewals WHERE original_transaction_id = ANY(\(ids)::text[])
            """)) {
            renewals[try row.decode(0)] = RenewalObservation(
                observedAtMs: try row.decode(1), autoRenew: try row.decode(2), autoRenewProductId: try row.decode(3),
                inBillingRetry: try row.decode(4), gracePeriodExpiresMs: try row.decode(5))
        }
        var summaries: [String: SubscriptionSummary] = [:]
        for original in originals {
            if let summary = SubscriptionSummary(entries: entries[original] ?? [], renewal: renewals[original], nowMs: now) {
                summaries[original] = summary
            }
        }
        return summaries
    }
}
