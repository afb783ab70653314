import EventStore
import Foundation
import Ledger
import LedgerStore
import TestSupport
import Testing

/// `replay` on the ledger the demo leaves.
@Suite("purchase-ledger replay")
struct ReplayCommandTests {
    @Test("a dry run finds nothing to change and prints checksums; the replay swaps and prints the same checksums; progress goes to plain lines off a terminal")
    func replayCommand() async throws {
        try await TestDatabase.withSchema { conninfo, pool in
            let demo = try await ToolRun.demo(databaseURL: conninfo)
            #expect(demo.status == 0, "\(demo.output)")
            let dry = try await ToolRun.run(["replay", "--dry-run"], databaseURL: conninfo)
            #expect(dry.status == 0, "\(dry.output)")
            #expect(dry.output.contains("nothing to change: the rebuilt projections equal the live ones"))
            #expect(dry.output.contains("dry run: nothing was swapped"))
            #expect(dry.output.contains(/replay \d+ \/ \d+ events, \d+ events\/s, ETA \d+ s\n/), "a plain progress line")
            let replay = try await ToolRun.run(["replay"], databaseURL: conninfo)
            #expect(replay.status == 0, "\(replay.output)")
            #expect(replay.output.contains("swapped in: the rebuilt projections are live"))
            func sums(_ output: String) -> [Substring] {
                output.split(separator: "\n").filter { $0.contains(" md5 ") }
            }
            #expect(sums(dry.output).count == 17, "one checksum per projection table (Projections.all's tables)")
            #expect(sums(dry.output) == sums(replay.output))
            let leftovers: Int64 = try await pool.withConnection {
                try $0.query("SELECT count(*) FROM pg_namespace WHERE nspname = current_schema() || '_replay'")[0].decode(0)
            }
            #expect(leftovers == 0, "the rebuild's schema is gone")
            #expect(try await ToolRun.run(["verify"], databaseURL: conninfo).status == 0)
        }
    }

    @Test("a log recorded before several apps that no serve of this release has named is refused, and nothing is rebuilt")
    func refusesALogThatNamesNoApp() async throws {
        try await TestDatabase.withSchema { conninfo, pool in
            #expect(try await ToolRun.run(["migrate"], databaseURL: conninfo).status == 0)
            let order = OrderCreated(
                orderId: "o-old", userId: "alice", productId: "com.example.coins100", quantity: 1,
                appAccountToken: UUID().uuidString.lowercased(), createdAtMs: 1_700_000_000_000)
            try await LedgerLog(store: EventStore(pool: pool, logger: TestDatabase.logger)).append(
                [LedgerAppend(stream: Streams.order(order.orderId), expectation: .noStream, events: [.orderCreated(order)])],
                metadata: RequestMetadata(actor: "test"))
            let replay = try await ToolRun.run(["replay", "--dry-run"], databaseURL: conninfo)
            #expect(replay.status == 1, "\(replay.output)")
            #expect(replay.output.contains("does not yet say which app its events belong to"), "\(replay.output)")
            #expect(!replay.output.contains("checksums:"))
        }
    }
}
