import EventStore
@testable import Ledger
@testable import LedgerProjections
@testable import LedgerService
import LedgerStore
import Postgres
import TestSupport
import Testing

/// A rebuild writes its projections in groups, each on a connection and in a transaction of
/// its own. A group that committed a page while another failed must not apply it twice when
/// the page is read again.
@Suite("Projection groups written concurrently")
struct ProjectionGroupsTests {
    static let day: Int64 = 86_400_000

    /// Consumables for three users, then the refund of one of them.
    static func events() -> [LedgerAppend] {
        let users = ["ann", "ben", "cat"]
        var appends = users.enumerated().map { index, user in
            LedgerAppend(stream: Streams.transaction("T\(index)"), expectation: .noStream, events: [.purchaseDelivered(PurchaseDelivered(
                transactionId: "T\(index)", originalTransactionId: "T\(index)", productId: "com.example.coins100", kind: .consumable,
                quantity: 1, userId: user, orderId: nil, environment: "Production", purchaseDateMs: 1_767_225_600_000 + Int64(index) * day,
                expiresDateMs: nil, priceMilliunits: 990, currency: "USD", appAccountToken: nil, appTransactionId: nil, isTrial: false,
                grants: ["coins": 100], submissionId: "s\(index)", match: .appAccountToken))])
        }
        appends.append(LedgerAppend(stream: Streams.refund("T1"), expectation: .noStream, events: [.purchaseRefunded(PurchaseRefunded(
            transactionId: "T1", originalTransactionId: "T1", productId: "com.example.coins100", kind: .consumable, quantity: 1,
            userId: "ben", environment: "Production", grants: ["coins": 100], refundedAtMs: 1_767_225_600_000 + 5 * day, reason: 0,
            revocation: "refund", source: "n1"))]))
        return appends
    }

    static func balances(on pool: ConnectionPool) async throws -> [String: Int64] {
        try await pool.withConnection { connection in
            var found: [String: Int64] = [:]
            for row in try connection.query("SELECT user_id, amount FROM projection_app_balances") { found[try row.decode(0)] = try row.decode(1) }
            return found
        }
    }

    /// The store with `events()` appended one by one, and its head.
    static func logged(on pool: ConnectionPool) async throws -> (EventStore, Int64) {
        let store = EventStore(pool: pool, logger: TestDatabase.logger)
        let log = LedgerLog(store: store)
        for append in events() { try await log.append([append], metadata: RequestMetadata(actor: "test")) }
        return (store, try await store.headPosition())
    }

    static func checkpoints(on pool: ConnectionPool) async throws -> [String: Int64] {
        try await pool.withConnection { connection in
            var found: [String: Int64] = [:]
            for row in try connection.query("SELECT name, position FROM projection_checkpoints") { found[try row.decode(0)] = try row.decode(1) }
            return found
        }
    }

    @Test("the groups apply every event once: a group whose checkpoint is ahead skips what it applied, the others catch up")
    func groupAheadSkips() async throws {
        try await LedgerHarness.withMigratedSchema { pool in
            let (store, head) = try await Self.logged(on: pool)

            // As if a page's balances group committed and the revenue group failed: balances
            // alone are at the head.
            try await ProjectionRunner(store: store, conninfo: "", projections: [BalancesProjection()], logger: TestDatabase.logger).catchUp()
            let alone = try await Self.balances(on: pool)
            #expect(alone == ["ann": 100, "ben": 0, "cat": 100])

            // Pages of one event, so several pages go through both groups concurrently.
            let grouped = ProjectionRunner(
                store: store, conninfo: "", groups: [[BalancesProjection()], [RevenueProjection(), EntitlementsProjection()]],
                pageSize: 1, logger: TestDatabase.logger)
            try await grouped.catchUp(verifyingChain: false)
            #expect(try await Self.balances(on: pool) == alone, "balances applied once")
            #expect(grouped.appliedPosition == head)
            let checkpoints = try await Self.checkpoints(on: pool)
            for name in ["app_balances", "revenue", "entitlements"] { #expect(checkpoints[name] == head, "\(name)") }
            let lines: Int64 = try await pool.withConnection {
                try $0.query("SELECT count(*) FROM projection_revenue_lines WHERE environment = 'Production'")[0].decode(0)
            }
            #expect(lines == 4, "three sales and one refund")
        }
    }

    @Test("the server's runner finds its pages lost by a database crash (rows and checkpoints behind it) with nothing more appended, and applies them again, once")
    func lostPagesAppliedAgain() async throws {
        try await TestDatabase.withSchema { conninfo, pool in
            try await Migrator.ledger().migrate(pool: pool, logger: TestDatabase.logger)
            let store = EventStore(pool: pool, logger: TestDatabase.logger)
            let log = LedgerLog(store: store)
            let runner = ProjectionRunner(store: store, conninfo: conninfo, projections: [BalancesProjection()], logger: TestDatabase.logger)
            let running = Task { await runner.run() }
            defer { running.cancel() }
            let appends = Self.events()
            for append in appends.prefix(2) { try await log.append([append], metadata: RequestMetadata(actor: "test")) }
            try await runner.waitUntilApplied(try await store.headPosition(), timeout: .seconds(20))
            // What the disk holds when the crash comes: pages commit without waiting for their
            // flush, so the next ones can be lost, their rows and checkpoints together.
            try await pool.withConnection { connection in
                try connection.execute("CREATE TABLE saved_balances AS SELECT * FROM projection_app_balances")
                try connection.execute("CREATE TABLE saved_checkpoints AS SELECT * FROM projection_checkpoints")
            }
            for append in appends.dropFirst(2) { try await log.append([append], metadata: RequestMetadata(actor: "test")) }
            let head = try await store.headPosition()
            try await runner.waitUntilApplied(head, timeout: .seconds(20))
            #expect(try await Self.balances(on: pool) == ["ann": 100, "ben": 0, "cat": 100])
            let restored = try await pool.withTransaction { connection in
                try ProjectionRunner.lock(connection)
                try connection.execute("DELETE FROM projection_app_balances")
                try connection.execute("INSERT INTO projection_app_balances SELECT * FROM saved_balances")
                try connection.execute("DELETE FROM projection_checkpoints")
                try connection.execute("INSERT INTO projection_checkpoints SELECT * FROM saved_checkpoints")
                // Read before the commit: once it commits, the runner may set it right at once.
                var found: [String: Int64] = [:]
                for row in try connection.query("SELECT user_id, amount FROM projection_app_balances") { found[try row.decode(0)] = try row.decode(1) }
                return found
            }
            #expect(restored == ["ann": 100, "ben": 100], "the refund and cat's purchase lost")

            // No append follows: the runner's idle pass must notice on its own.
            try await waitUntil("the runner applied the lost pages again", within: .seconds(30)) {
                try await Self.checkpoints(on: pool)["app_balances"] == head
            }
            #expect(try await Self.balances(on: pool) == ["ann": 100, "ben": 0, "cat": 100], "each event applied once")
        }
    }

    @Test("a runner that catches up on projections already at the head knows it: a read waits for nothing")
    func caughtUpKnowsIt() async throws {
        try await LedgerHarness.withMigratedSchema { pool in
            let (store, head) = try await Self.logged(on: pool)
            try await ProjectionRunner(store: store, conninfo: "", logger: TestDatabase.logger).catchUp()
            // A second runner, one group and several, finds nothing to apply. It used to keep
            // its position unknown, so a command's read after it waited out its whole time-out
            // (30 s a read, found by the dispute benchmark on a log just swapped in).
            for runner in [
                ProjectionRunner(store: store, conninfo: "", logger: TestDatabase.logger),
                ProjectionRunner(store: store, conninfo: "", groups: [[BalancesProjection()], Projections.all.filter { $0.name != "app_balances" }], pageSize: 500,
                                 logger: TestDatabase.logger),
            ] {
                try await runner.catchUp(verifyingChain: false)
                #expect(runner.appliedPosition == head)
                let started = ContinuousClock.now
                // A time-out far beyond what a loaded machine needs, so "at once" is told from
                // "after the time-out" without racing the clock.
                try await runner.waitUntilApplied(head, timeout: .seconds(60))
                #expect(ContinuousClock.now - started < .seconds(20))
            }
        }
    }
}
