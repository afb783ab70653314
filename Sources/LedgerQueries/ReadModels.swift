import AppStore
import Foundation
import Ledger
import LedgerProjections
import LedgerStore
import Postgres
import Primitives

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
    /// The Apple accounts that paid for anything this user held (docs/http-api.md names).
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

/// How fresh a read must be (docs/http-api.md, "Reads that say what they need").
public enum ReadFreshness: Sendable, Hashable {
    /// The log as it stood when the read began: the caller reads its own writes and everyone's
    /// before them, and pays for every writer's events (the default, without `X-Ledger-After`).
    case head
    /// Once the projections have applied `position` (`X-Ledger-After`, the `X-Ledger-Position`
    /// the caller's own write answered with): the wait covers that write and nothing after it.
    case position(Int64)
    /// Whatever the read models hold now (`X-Ledger-After: 0`): no wait, no check.
    case any

    /// `X-Ledger-After`'s value: a position, 0 for `.any`; nil when it is not one (the caller
    /// answers 400), absent for `.head`.
    public init?(header: String?) {
        guard let header else { self = .head; return }
        guard let position = Int64(header.trimmingCharacters(in: .whitespaces)), position >= 0 else { return nil }
        self = position == 0 ? .any : .position(position)
    }
}

/// Reads the projections. By default a read waits until the projections have applied the log
/// as it stood when the read began, so a caller reads its own writes (docs/architecture.md §5);
/// `reading(_:)` makes a copy that waits for a given position only, or for nothing.
public struct ReadModels: Sendable {
    /// The primary's pool: the log's head, and reads when no replica is set or it lags.
    let pool: ConnectionPool
    let runner: ProjectionRunner
    let timeout: Duration
    /// The ledger's now, for statuses that depend on it (a subscription active until it expires).
    let clock: WallClock
    /// Standbys serving the reads (`DATABASE_READ_URL`), when set.
    public let replica: ReplicaReads?
    /// What this copy's reads wait for.
    public private(set) var freshness: ReadFreshness = .head

    /// How long a read given a position waits for it before 503 `projections_behind`.
    static let positionTimeout: Duration = .seconds(10)

    public init(runner: ProjectionRunner, timeout: Duration, clock: WallClock, replica: ReplicaReads? = nil) {
        self.pool = runner.store.pool
        self.runner = runner
        self.timeout = timeout
        self.clock = clock
        self.replica = replica
    }

    /// These read models, reading as fresh as `freshness` says.
    public func reading(_ freshness: ReadFreshness) -> ReadModels {
        var copy = self
        copy.freshness = freshness
        return copy
    }

    /// Runs `body` on a connection whose projections are as fresh as `freshness` asks.
    ///
    /// `.head`: the runner has applied the head as it stood at this call (a wait resumed by the
    /// runner, no polling); a standby serves once that same connection has replayed the
    /// primary's WAL position taken after that, else the primary.
    ///
    /// `.position(p)`: the runner has applied `p` (no query when it has already); a standby
    /// serves once its own replayed checkpoints say its projections hold `p`, which is the
    /// replay position of that write and no later one, else the primary.
    ///
    /// `.any`: the primary or a standby as it is.
    func withConsistentConnection<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        switch freshness {
        case .head:
            try await waitForHead()
            guard let replica else { return try await pool.withConnection(body) }
            return try await replica.withConnection(after: .lsn(try await ReplicaReads.currentLSN(on: pool)), primary: pool, body)
        case .position(let position):
            if runner.appliedPosition < position {
                // A position is answered only once committed, so one past the primary's head was
                // never this log's: a client error at once, not a 10 s wait for a 503.
                let head = try await runner.store.headPosition()
                guard position <= head else {
                    throw LedgerServiceError(.invalidRequest, "X-Ledger-After \(position) is past the log's head (\(head)): no answer of this ledger named it")
                }
            }
            try await runner.waitUntilApplied(position, timeout: Self.positionTimeout)
            guard let replica else { return try await pool.withConnection(body) }
            return try await replica.withConnection(
                after: .projections(position, names: runner.projectionNames), primary: pool, body)
        case .any:
            guard let replica else { return try await pool.withConnection(body) }
            return try await replica.withConnection(after: .nothing, primary: pool, body)
        }
    }

    /// Returns once the projections hold the log as it stood at this call: every read's wait,
    /// and what `ledger-bench reads` times alone.
    public func waitForHead() async throws {
        try await runner.waitUntilApplied(try await runner.store.headPosition(), timeout: timeout)
    }

    public func user(_ userId: String) async throws -> UserView {
        try await mappingDatabaseErrors {
            let now = clock()
            return try await withConsistentConnection { connection in
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
                let summaries = try SubscriptionSummaries.read(
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
                        expiresAt: expires.map(RevenueDay.iso8601))
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
            let now = clock()
            return try await withConsistentConnection { connection in
                guard let owner = try connection.query("""
                    SELECT user_id, environment FROM projection_entitlements
                    WHERE original_transaction_id = \(originalTransactionId) AND kind = 'auto_renewable'
                    """).first,
                    let summary = try SubscriptionSummaries.read(originalTransactionId, on: connection, now: now)
                else { return nil }
                return SubscriptionView(
                    originalTransactionId: originalTransactionId, productId: summary.productId, ownerUserId: try owner.decode(0),
                    status: summary.status.rawValue, expiresAt: summary.expiresAtMs.map(RevenueDay.iso8601), autoRenew: summary.autoRenew,
                    inTrial: summary.inTrial, environment: try owner.decode(1))
            }
        }
    }
}
