import Foundation
import Ledger
import LedgerProjections
import Logging
import Synchronization
import Testing

/// A rebuild that stops part-way (the process killed, the connection lost) is resumed by the
/// next replay from its last committed pages, and ends exactly as a rebuild from the start.
@Suite("Replay resumed after an interruption")
struct ReplayResumeTests {
    static var quiet: Logger { ReplayFlowTests.quiet }

    /// Runs a dry run of `replay` and cancels it once it has applied half the log; returns
    /// where it was stopped.
    static func interrupt(_ replay: ProjectionReplay) async throws -> Int64 {
        let interruption = Interruption()
        // Started under the lock, so its first look at the handle finds it.
        let task = interruption.task.withLock { handle in
            let task = Task {
                try await replay.run(dryRun: true) { applied, head in
                    guard applied * 2 >= head else { return }
                    interruption.stop(at: applied)
                }
            }
            handle = task
            return task
        }
        await #expect(throws: (any Error).self, "the interrupted run does not finish") { try await task.value }
        return interruption.stoppedAt.withLock { $0 }
    }

    /// A run to cancel from its own progress, and where it was.
    final class Interruption: Sendable {
        let task = Mutex<Task<ReplayReport, any Error>?>(nil)
        let stoppedAt = Mutex<Int64>(0)

        func stop(at position: Int64) {
            stoppedAt.withLock { if $0 == 0 { $0 = position } }
            task.withLock { $0?.cancel() }
        }
    }

    @Test("a dry run stopped half-way leaves its pages; the next run goes on from them and gives the checksums of a rebuild from the start")
    func resumedDryRun() async throws {
        try await LedgerHarness.with { ledger in
            for index in 0..<8 {
                let user = "resume-\(index)"
                let product = index % 3 == 0 ? "com.example.pro.monthly" : "com.example.coins100"
                let (_, purchase) = try await ledger.orderAndBuy(user: user, product: product, appleId: "apple-\(user)")
                #expect(try await ledger.submit(user: user, purchase: purchase).outcome == "delivered")
            }
            let clock = ledger.server.service.clock
            // Pages of 5 events; the run is cancelled once its projections passed half the log.
            let replay = ProjectionReplay(conninfo: ledger.conninfo, pageSize: 5, clock: clock, logger: Self.quiet)
            #expect(try await Self.interrupt(replay) > 0)

            let schema: String = try await ledger.pool.withConnection { try $0.query("SELECT current_schema()::text")[0].decode(0) }
            let shadow = schema + "_replay"
            let left: Int64 = try await ledger.pool.withConnection {
                try $0.query("SELECT coalesce(min(position), 0) FROM \(identifier: shadow).projection_checkpoints")[0].decode(0)
            }
            #expect(left > 0, "the pages committed before the interruption are kept")

            let resumed = try await replay.run(dryRun: true)
            #expect(resumed.resumedFrom == left)
            #expect(resumed.changes.isEmpty, "\(resumed.changes)")
            let fresh = try await ProjectionReplay(conninfo: ledger.conninfo, pageSize: 5, clock: clock, logger: Self.quiet).run(dryRun: true)
            #expect(fresh.resumedFrom == nil, "a finished dry run leaves nothing to resume")
            #expect(resumed.checksums.map(\.md5) == fresh.checksums.map(\.md5))
            #expect(resumed.checksums.map(\.rows) == fresh.checksums.map(\.rows))

            // A rebuild of other code (another projection version) starts over instead.
            #expect(try await Self.interrupt(replay) > 0)
            var changed = Projections.all
            changed[0] = BalancesVersion99()
            let other = try await ProjectionReplay(conninfo: ledger.conninfo, projections: changed, pageSize: 5, clock: clock, logger: Self.quiet)
                .run(dryRun: true)
            #expect(other.resumedFrom == nil)
            #expect(other.changes.isEmpty)
        }
    }
}

/// The balances projection under another version number: the same rows, other code.
struct BalancesVersion99: PlacelessProjection {
    let name = "app_balances"
    let version: Int32 = 99
    let tables = ["projection_app_balances"]
    func changes(for event: LedgerEvent) -> [ProjectionChange] { BalancesProjection().changes(for: event) }
}
