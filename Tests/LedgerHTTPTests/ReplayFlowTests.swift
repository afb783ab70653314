import Foundation
import Ledger
import LedgerProjections
import LedgerService
import Logging
import Synchronization
import Testing

/// A balances projection with a planted bug: it ignores refunds of consumables.
struct BalancesIgnoringRefunds: PlacelessProjection {
    let name = "app_balances"
    let version: Int32 = 1
    let tables = ["projection_app_balances"]

    func changes(for event: LedgerEvent) -> [ProjectionChange] {
        if case .purchaseRefunded = event { return [] }
        return BalancesProjection().changes(for: event)
    }
}

/// `replay` against a live server: the workflow after a bug fix.
@Suite("Replay after a bug fix")
struct ReplayFlowTests {
    static var quiet: Logger {
        var logger = Logger(label: "tests.replay")
        logger.logLevel = .warning
        return logger
    }

    func balance(_ ledger: LedgerHarness, _ user: String) async throws -> Int? {
        let answer = try await ledger.get("/v1/users/\(user)")
        guard answer.status == 200 else { return nil }
        return (answer.json["balances"] as? [String: any Sendable])?["coins"] as? Int
    }

    @Test("the dry run names exactly the users and amounts a fixed bug changes; the replay swaps them in while reads keep answering")
    func plantedBugFixed() async throws {
        try await LedgerHarness.with { ledger in
            for (user, count) in [("alice", 1), ("bob", 2), ("carol", 2)] {
                for _ in 0..<count {
                    let (_, coins) = try await ledger.orderAndBuy(user: user, product: "com.example.coins100", appleId: "apple-\(user)")
                    #expect(try await ledger.submit(user: user, purchase: coins).outcome == "delivered")
                    if user == "bob" && count == 2, try await ledger.count("PurchaseRefunded") == 0 {
                        _ = try await ledger.simulator.refund(transactionId: coins.transactionId)
                        try await ledger.eventually("the refund is recorded") { try await ledger.count("PurchaseRefunded") == 1 }
                    }
                }
            }
            #expect(try await balance(ledger, "bob") == 100)

            // The buggy build goes live (a real rebuild, with the bug).
            var buggy = Projections.all
            buggy[0] = BalancesIgnoringRefunds()
            let planted = try await ProjectionReplay(conninfo: ledger.conninfo, projections: buggy, clock: ledger.server.service.clock, logger: Self.quiet).run(dryRun: false)
            #expect(planted.swapped)
            #expect(planted.changes == ["balance of user bob in \(LedgerHarness.bundleId), coins: 100 → 200"])
            #expect(try await balance(ledger, "bob") == 200)

            // The fix: the dry run names bob's balance, old → new, and nothing else.
            let fixed = ProjectionReplay(conninfo: ledger.conninfo, clock: ledger.server.service.clock, logger: Self.quiet)
            let dry = try await fixed.run(dryRun: true)
            #expect(!dry.swapped)
            #expect(dry.changes == ["balance of user bob in \(LedgerHarness.bundleId), coins: 200 → 100"])
            #expect(try await balance(ledger, "bob") == 200, "a dry run swaps nothing")
            let again = try await fixed.run(dryRun: true)
            #expect(again.checksums.map(\.md5) == dry.checksums.map(\.md5), "two rebuilds of the same events are identical")
            #expect(dry.checksums.count == Projections.all.flatMap(\.tables).count)

            // The replay itself, with reads running throughout: each answer is the old or the
            // new balance, never an error, an empty or a partial one.
            let seen = Mutex<[Int?]>([])
            let reading = Mutex(true)
            let reader = Task {
                while reading.withLock({ $0 }) {
                    let bob = try await balance(ledger, "bob")
                    let alice = try await balance(ledger, "alice")
                    seen.withLock { $0.append(contentsOf: [bob, alice]) }
                }
            }
            let swapped = try await fixed.run(dryRun: false)
            reading.withLock { $0 = false }
            try await reader.value
            #expect(swapped.swapped)
            #expect(swapped.changes == ["balance of user bob in \(LedgerHarness.bundleId), coins: 200 → 100"])
            #expect(swapped.checksums.map(\.md5) == dry.checksums.map(\.md5))
            let answers = seen.withLock { $0 }
            #expect(!answers.isEmpty)
            #expect(answers.allSatisfy { $0 == 100 || $0 == 200 }, "\(answers.filter { $0 != 100 && $0 != 200 })")
            #expect(try await balance(ledger, "bob") == 100)
            #expect(try await balance(ledger, "alice") == 100)
            #expect(try await balance(ledger, "carol") == 200)

            // The server's own runner carries on with the swapped tables.
            let (_, more) = try await ledger.orderAndBuy(user: "bob", product: "com.example.coins100", appleId: "apple-bob")
            #expect(try await ledger.submit(user: "bob", purchase: more).outcome == "delivered")
            #expect(try await balance(ledger, "bob") == 200)
            #expect(try await fixed.run(dryRun: true).changes.isEmpty)

            // A rebuild fills the timeline tables without their keys and keys them at the end.
            // A page of one event makes one link come from several pages (a receipt's submission
            // and its resolution both link the transaction to it): the repeats are dropped, and
            // the rebuild equals the live tables.
            let onePerPage = try await ProjectionReplay(conninfo: ledger.conninfo, pageSize: 1, clock: ledger.server.service.clock, logger: Self.quiet).run(dryRun: true)
            #expect(onePerPage.changes.isEmpty)
            #expect(onePerPage.events > 20)
            // The swapped-in tables carry their keys: the server's runner relies on them to skip repeats.
            let keys: [String] = try await ledger.pool.withConnection { connection in
                try connection.query("""
                    SELECT conname::text FROM pg_constraint WHERE contype = 'p'
                    AND conrelid IN ('projection_timeline_events'::regclass, 'projection_timeline_links'::regclass) ORDER BY 1
                    """).map { try $0.decode(0) }
            }
            #expect(keys == ["projection_timeline_events_pkey", "projection_timeline_links_pkey"])
        }
    }
}
