import AppStore
import ArgumentParser
import Foundation
import LedgerService
import LedgerWorkers
import Logging
import Primitives

/// `purchase-ledger reconcile [--since DATE]`: asks Apple's notification history for what the
/// ledger missed and records it, as `serve` does every `LEDGER_RECONCILE_INTERVAL`.
struct ReconcileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconcile",
        abstract: "Record every notification Apple sent that the ledger missed (App Store Server API).",
        discussion: "Pages Get Notification History from where the last reconciliation ended (or --since), in production and sandbox, and records each notification not yet recorded, by the same rules as a posted one.")

    @OptionGroup var database: DatabaseOptions

    @Option(help: "Start here (YYYY-MM-DD, UTC) instead of where the last reconciliation ended")
    var since: String?

    func run() async throws {
        let logger = Logger(label: "purchase-ledger.reconcile")
        var sinceMs: Int64?
        if let since {
            guard let start = UTCDays.startMs(of: since) else { throw ValidationError("--since is a date YYYY-MM-DD, not \(since)") }
            sinceMs = start
        }
        let start = sinceMs
        let summaries = try await database.withAskingApple(logger: logger) { service, clients in
            try await Reconciler(service: service, clients: clients, logger: logger).run(sinceMs: start)
        }
        let several = Set(summaries.map(\.bundleId)).count > 1
        for summary in summaries {
            print("\(several ? summary.bundleId + " " : "")\(summary.environment.rawValue): \(summary.seen) notifications in Apple's history, \(summary.recorded) recorded now (\(summary.pages) pages); purchases the ledger had no record of: \(summary.recovered.delivered) delivered, \(summary.recovered.unclaimed) unclaimed")
        }
    }
}
