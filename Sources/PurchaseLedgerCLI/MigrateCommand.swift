import ArgumentParser
import EventStore
import LedgerStore
import Logging

struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate", abstract: "Apply the pending schema migrations (safe to run again).")

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let logger = Logger(label: "purchase-ledger.migrate")
        let report = try await database.withDatabase(logger: logger) { _, pool in
            try await Migrator.ledger().migrate(pool: pool, logger: logger)
        }
        if report.applied.isEmpty {
            print("schema up to date (\(report.alreadyApplied) migrations applied before)")
        } else {
            print("applied \(report.applied.count) migrations: \(report.applied.joined(separator: ", "))")
        }
    }
}
