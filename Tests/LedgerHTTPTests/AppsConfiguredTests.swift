import EventStore
import Foundation
import Ledger
import LedgerStore
import Postgres
import TestSupport
import Testing

/// `serve` records the apps it serves (`AppsConfigured`), and the first record of a log made
/// before events named their app says which app those events belong to (docs/several-apps.md).
@Suite struct AppsConfiguredTests {
    private static let served = [ConfiguredApp(bundleId: LedgerHarness.bundleId)]

    private static func records(_ ledger: LedgerHarness) async throws -> [AppsConfigured] {
        try await ledger.events(AppsConfigured.eventType).compactMap { if case .appsConfigured(let a) = $0 { a } else { nil } }
    }

    @Test("a new log records its app once, with no legacy app; a restart with the same apps records nothing")
    func newLogRecordsItsAppOnce() async throws {
        try await LedgerHarness.with { ledger in
            #expect(try await Self.records(ledger) == [AppsConfigured(apps: Self.served, legacyBundleId: nil)])
            try await ledger.restart()
            #expect(try await Self.records(ledger).count == 1)
            // The timeline line support reads for it.
            let first = try await ledger.pool.withConnection { connection in
                try connection.query("SELECT min(position) FROM events WHERE event_type = 'AppsConfigured'")[0].decode(0, as: Int64.self)
            }
            #expect(first == 1, "recorded before anything else the server records")
        }
    }

    @Test(
        "a log holding events recorded without their app names the configured app as theirs; one whose events all name theirs does not",
        arguments: [true, false])
    func legacyAppOfAnOlderLog(untagged: Bool) async throws {
        let expected: String? = untagged ? LedgerHarness.bundleId : nil
        do {
            try await TestDatabase.withSchema { conninfo, pool in
                try await Migrator.ledger().migrate(pool: pool, logger: TestDatabase.logger)
                let log = LedgerLog(store: EventStore(pool: pool, logger: TestDatabase.logger))
                // An order as the previous release recorded it (no bundle_id), or as this one does.
                let order = OrderCreated(
                    orderId: "o-old", userId: "alice", productId: "com.example.coins100", quantity: 1,
                    appAccountToken: UUID().uuidString.lowercased(), createdAtMs: 1_700_000_000_000,
                    bundleId: untagged ? nil : LedgerHarness.bundleId)
                try await log.append(
                    [LedgerAppend(stream: Streams.order(order.orderId), expectation: .noStream, events: [.orderCreated(order)])],
                    metadata: RequestMetadata(actor: "test"))
                let recorded = try await LedgerHarness.with(database: conninfo) { ledger in try await Self.records(ledger) }
                #expect(recorded == [AppsConfigured(apps: Self.served, legacyBundleId: expected)])
            }
        }
    }

    @Test("a log recorded before events named their app is not first served with several apps: serve refuses (exit 78) until it has run with that app alone, then serves them all")
    func severalAppsNeedTheLegacyAppFirst() async throws {
        try await TestDatabase.withSchema { conninfo, pool in
            try await Migrator.ledger().migrate(pool: pool, logger: TestDatabase.logger)
            let log = LedgerLog(store: EventStore(pool: pool, logger: TestDatabase.logger))
            try await log.append(AppsReadModelTests.purchases(of: "alice", app: nil, prefix: "old", coins: 100), metadata: RequestMetadata(actor: "test"))
            await #expect(throws: LedgerServiceError.self) {
                try await LedgerHarness.with(database: conninfo, apps: SeveralAppsCommandsTests.apps) { _ in }
            }
            #expect(try await log.read(stream: Streams.apps).isEmpty, "nothing recorded")
            // Once with the app alone, then with both: the legacy app stays the one it was.
            let first = try await LedgerHarness.with(database: conninfo) { ledger in try await Self.records(ledger) }
            #expect(first.map(\.legacyBundleId) == [LedgerHarness.bundleId])
            let then = try await LedgerHarness.with(database: conninfo, apps: SeveralAppsCommandsTests.apps) { ledger in try await Self.records(ledger) }
            #expect(then.map(\.legacyBundleId) == [LedgerHarness.bundleId, LedgerHarness.bundleId])
            #expect(then.last?.apps.map(\.bundleId) == [LedgerHarness.bundleId, SeveralAppsCommandsTests.other])
        }
    }
}
