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
        /// The app the product belongs to.
        public var bundleId: String
    }

    /// A balance of one unit in one app: coins bought in one app are not another's.
    public struct Balance: Sendable, Hashable, Codable {
        public var bundleId: String
        public var unit: String
        public var amount: Int64
    }

    public var userId: String
    /// Every app's, by app and unit.
    public var balances: [Balance]
    /// Every app's, by original transaction id.
    public var entitlements: [Entitlement]
    /// The Apple accounts that paid for anything this user held (docs/http-api.md names).
    public var appleAccounts: [String]

    /// The apps the user holds a balance or an entitlement in, in bundle id order.
    public var bundleIds: [String] { Set(balances.map(\.bundleId) + entitlements.map(\.bundleId)).sorted() }

    /// The balances held in `bundleId`, by unit.
    public func balances(in bundleId: String) -> [String: Int64] {
        Dictionary(balances.filter { $0.bundleId == bundleId }.map { ($0.unit, $0.amount) }, uniquingKeysWith: +)
    }

    public func entitlements(in bundleId: String) -> [Entitlement] { entitlements.filter { $0.bundleId == bundleId } }
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
    /// The app the subscription belongs to.
    public var bundleId: String
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
    /// The app of rows written before read models named theirs.
    let legacy = LegacyAppName()
    /// Where the keys are that open documents sealed for a person (docs/erasure.md), for the
    /// timelines' reading of Apple's answers; without them those answers are not read.
    private(set) var documentKeys: SubjectStore?

    /// How long a read given a position waits for it before 503 `projections_behind`.
    static let positionTimeout: Duration = .seconds(10)

    public init(runner: ProjectionRunner, timeout: Duration, clock: WallClock, replica: ReplicaReads? = nil) {
        self.pool = runner.store.pool
        self.runner = runner
        self.timeout = timeout
        self.clock = clock
        self.replica = replica
    }

    /// These read models, opening sealed documents with `subjects`' keys.
    public func opening(documentsWith subjects: SubjectStore) -> ReadModels {
        var copy = self
        copy.documentKeys = subjects
        return copy
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
            return try await withConsistentConnection { [legacy] connection in
                let balances = try connection.query("""
                    SELECT bundle_id, unit, amount FROM projection_app_balances WHERE user_id = \(userId) ORDER BY bundle_id, unit
                    """).map { row in
                    UserView.Balance(bundleId: try row.decode(0), unit: try row.decode(1), amount: try row.decode(2))
                }
                let legacyApp = try legacy.name(on: connection)
                let owned = try connection.query("""
                    SELECT original_transaction_id, product_id, kind, revoked_at_ms, coalesce(bundle_id, \(legacyApp)) FROM projection_entitlements
                    WHERE user_id = \(userId) ORDER BY original_transaction_id
                    """).map { row in
                    (original: try row.decode(0, as: String.self), product: try row.decode(1, as: String.self),
                     kind: try row.decode(2, as: String.self), revokedAt: try row.decode(3, as: Int64?.self), app: try row.decode(4, as: String.self))
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
                        expiresAt: expires.map(RevenueDay.iso8601), bundleId: item.app)
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
            return try await withConsistentConnection { [legacy] connection in
                let legacyApp = try legacy.name(on: connection)
                guard let owner = try connection.query("""
                    SELECT user_id, environment, coalesce(bundle_id, \(legacyApp)) FROM projection_entitlements
                    WHERE original_transaction_id = \(originalTransactionId) AND kind = 'auto_renewable'
                    """).first,
                    let summary = try SubscriptionSummaries.read(originalTransactionId, on: connection, now: now)
                else { return nil }
                return SubscriptionView(
                    originalTransactionId: originalTransactionId, productId: summary.productId, ownerUserId: try owner.decode(0),
                    status: summary.status.rawValue, expiresAt: summary.expiresAtMs.map(RevenueDay.iso8601), autoRenew: summary.autoRenew,
                    inTrial: summary.inTrial, environment: try owner.decode(1), bundleId: try owner.decode(2))
            }
        }
    }
}
