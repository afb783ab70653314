import AppStoreClient
import ArgumentParser
import Foundation
import LedgerProjections
import LedgerService
import LedgerStore
import Logging

/// `purchase-ledger replay [--dry-run]`: rebuilds every projection from the first event beside
/// the live ones and swaps them in; with --dry-run, only says what would change.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Rebuild every projection from the first event and swap it in while the server keeps serving.",
        discussion: """
            With --dry-run, builds without swapping and prints what would change (balances, subscriptions, revenue totals: \
            old → new). Prints a checksum per table: two rebuilds of the same events print the same. Shows progress and the \
            time left. A rebuild that was interrupted (a crash, a kill) is resumed by the next replay from its last \
            committed page. Runs as the database owner (DATABASE_URL's role), since it creates and moves tables; events are \
            never touched.
            """)

    @OptionGroup var database: DatabaseOptions

    @Flag(name: .customLong("dry-run"), help: "Build and compare, swap nothing")
    var dryRun = false

    func run() async throws {
        let logger = Logger(label: "purchase-ledger.replay")
        let dryRun = dryRun
        let report = try await database.withDatabase(logger: logger) { conninfo, pool in
            // A log recorded before several apps names its app only once this release served it
            // (`AppsConfigured`); rebuilt before that, its balances would belong to no app.
            let reads = LedgerReads(pool: pool)
            if try await reads.legacyApp() == nil, try await reads.holdsEventsWithoutApp() {
                FileHandle.standardError.write(Data((
                    "replay: this log was recorded before several apps and does not yet say which app its events belong to; "
                    + "start `purchase-ledger serve` of this release on it once (it records that), then replay\n").utf8))
                throw ExitCode(1)
            }
            return try await ProjectionReplay(
                conninfo: conninfo, clock: .system,
                keyEncryptionKey: try LedgerConfiguration.keyEncryptionKey(environment: ProcessInfo.processInfo.environment), logger: logger)
                .run(dryRun: dryRun, progress: TerminalProgress.rateReporter(label: "replay"))
        }
        TerminalProgress.finish()
        if let resumed = report.resumedFrom {
            print("resumed the rebuild an interrupted run left at position \(resumed)")
        }
        let rebuilt = report.rebuilt.seconds
        print("replay\(dryRun ? " (dry run)" : ""): rebuilt \(report.events) events in \(String(format: "%.1f", rebuilt)) s"
            + " (\(String(format: "%.0f", Double(report.events) / max(rebuilt, 0.001))) events/s), \(String(format: "%.1f", report.elapsed.seconds)) s in all")
        if report.changes.isEmpty {
            print("nothing to change: the rebuilt projections equal the live ones")
        } else {
            print("\(dryRun ? "would change" : "changed") (old → new):")
            for line in report.changes { print("  " + line) }
        }
        print("checksums:")
        let width = report.checksums.map(\.table.count).max() ?? 0
        for sum in report.checksums {
            print("  " + sum.table.padding(toLength: width, withPad: " ", startingAt: 0) + "  \(sum.rows) rows  md5 \(sum.md5)")
        }
        print(report.swapped ? "swapped in: the rebuilt projections are live" : "dry run: nothing was swapped")
    }
}
