import EventStore
import Foundation
import LedgerProjections
import LedgerQueries
import LedgerService
import LedgerStore
import Logging
import Primitives
import PurchaseLedgerCLI
import Postgres

/// What the demo prints after its purchases, with the very code of `audit revenue`, `dispute`
/// and `replay --dry-run`.
enum DemoReport {
    /// `clock` is the demo ledger's (the simulator's), so statuses are told at the demo's now.
    static func print(conninfo: String, refundedTransaction: String, clock: WallClock, logger: Logger) async throws {
        try await withPool(conninfo, logger: logger) { pool in
            let runner = ProjectionRunner(store: EventStore(pool: pool, logger: logger), conninfo: conninfo, logger: logger)
            try await runner.catchUp()
            let people = People(subjects: SubjectStore(pool: pool, keyEncryptionKey: nil))
            let reads = ReadModels(runner: runner, timeout: .seconds(30), clock: clock).opening(documentsWith: people.subjects)
            let query = try RevenueQuery(from: "2000-01-01", to: "2099-12-31", groupBy: .day)
            Swift.print("revenue by day (purchase-ledger audit revenue --group-by day):")
            Swift.print(RevenueFormat.table(try await reads.revenue(query)))
            Swift.print("revenue by app, the developer account's two (purchase-ledger audit revenue --group-by app):")
            Swift.print(RevenueFormat.table(try await reads.revenue(try RevenueQuery(from: "2000-01-01", to: "2099-12-31", groupBy: .app))))
            if let timeline = try await reads.timeline(.transaction, refundedTransaction) {
                Swift.print("one dispute timeline, bob's refunded pack (purchase-ledger dispute \(refundedTransaction)):")
                // As `dispute` prints it: the handles the log holds for people opened to their ids.
                Swift.print(try await people.open(DisputeStory.text(timeline)))
            }
        }
        let dry = try await ProjectionReplay(conninfo: conninfo, clock: clock, logger: logger).run(dryRun: true)
        Swift.print("replay --dry-run: rebuilt \(dry.events) events; "
            + (dry.changes.isEmpty ? "nothing to change" : "\(dry.changes.count) differences: " + dry.changes.joined(separator: "; ")))
    }
}
