import AppStoreClient
import ArgumentParser
import Foundation
import LedgerService
import Logging
import Postgres

/// `purchase-ledger import FILE`: bulk history from an earlier system, through COPY.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import purchase history (JSON lines) from an earlier system; running it again appends nothing.",
        discussion: """
            Each line is {"user_id", "verify_receipt_response": Apple's stored answer} or {"user_id", "transaction": \
            {"transaction_id", "product_id", "purchase_date_ms", "original_transaction_id"?, "quantity"?, "environment"?, \
            "expires_date_ms"?, "price_milliunits"? (the whole transaction's, as Apple's signed price), "currency"?, "bundle_id"? (its app, \
            required when several are served)}}. Lines are decided by the live rules (bundle id, catalog, \
            ownership) without orders. A bad line is reported by number and nothing of it is kept; the exit code is then 1. \
            Needs APPLE_BUNDLE_ID and a loaded catalog; acts as ledger_app.
            """)

    @OptionGroup var database: DatabaseOptions

    @Argument(help: "The JSON lines file")
    var file: String

    func run() async throws {
        let logger = Logger(label: "purchase-ledger.import")
        let configuration: LedgerConfiguration
        do {
            configuration = try LedgerConfiguration(environment: ProcessInfo.processInfo.environment)
        } catch {
            throw ValidationError(error.message)
        }
        let url = URL(fileURLWithPath: file)
        guard FileManager.default.isReadableFile(atPath: url.path) else { throw ValidationError("cannot read \(file)") }
        let summary = try await database.withDatabase(logger: logger) { conninfo, _ in
            try await withPool(try Conninfo.addingOptions("-c role=ledger_app", to: conninfo), maxConnections: 2, logger: logger) { pool in
                try await HistoryImport(pool: pool, configuration: configuration, clock: .system, logger: logger)
                    .run(file: url, progress: TerminalProgress.rateReporter(label: "import", unit: "lines"))
            }
        }
        TerminalProgress.finish()
        print("import \(file): \(summary.lines) lines, \(summary.imported) imported (\(summary.events) events), "
            + "\(summary.skipped) already imported or blank, \(summary.errors.count) bad")
        for error in summary.errors { print("line \(error.line): \(error.message)") }
        if !summary.errors.isEmpty { throw ExitCode(1) }
    }
}
