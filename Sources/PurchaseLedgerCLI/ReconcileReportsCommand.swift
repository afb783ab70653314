import ArgumentParser
import EventStore
import Foundation
import Ledger
import LedgerService
import Logging
import LedgerStore
import Postgres

/// `purchase-ledger reconcile-reports FILE...`: imports App Store Connect sales or financial
/// reports (gzip or not, as downloaded) and sets each against the ledger, as the console's
/// Reconciliation page does. Exits 1 when a report and the ledger disagree, so a nightly job
/// can alert on it.
struct ReconcileReportsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconcile-reports",
        abstract: "Import App Store Connect sales or financial reports and compare them with the ledger.",
        discussion: "Each file is kept verbatim and recorded (once per content). Cells are period (Pacific days for Sales and Trends), product (by the catalog's sku or apple_id), currency, unit price and sale or return; production only. Prints every cell that differs with the ledger's transactions behind it. Exit 0 when every report agrees, 1 when one differs or cannot be read.")

    @OptionGroup var database: DatabaseOptions

    @Argument(help: "Report files (.txt or .txt.gz)")
    var files: [String]

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("name at least one report file") }
    }

    func run() async throws {
        let logger = Logger(label: "purchase-ledger.reconcile-reports")
        var contents: [(String, [UInt8])] = []
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else { throw ValidationError("cannot read \(file)") }
            contents.append((file, Array(data)))
        }
        let reports = contents
        let allAgree = try await database.withReadModels(logger: logger) { reads, pool in
            let importer = ReportImporter(store: EventStore(pool: pool, logger: logger))
            var agree = true
            for (file, bytes) in reports {
                let imported = try await importer.importReport(
                    bytes, fileName: URL(fileURLWithPath: file).lastPathComponent, metadata: RequestMetadata(actor: "cli:reconcile-reports"))
                let report = imported.report
                guard let (_, result) = try await reads.reconciliation(ofReport: report.documentSha256) else { continue }
                print("\(file): \(report.kind) report \(report.periodStart) – \(report.periodEnd), \(report.lines.count) in-app lines\(imported.alreadyImported ? " (imported before)" : "")")
                print("  \(result.cellsCompared) cells compared, \(result.cellsMatching) agree, \(result.differences.count) differ")
                if !result.unknownProducts.isEmpty {
                    print("  products no catalog entry maps to (add sku or apple_id): \(result.unknownProducts.joined(separator: ", "))")
                }
                for d in result.differences {
                    let cell = d.cell
                    let period = cell.periodStart == cell.periodEnd ? cell.periodStart : "\(cell.periodStart)..\(cell.periodEnd)"
                    let price = Money(minorUnits: cell.unitPriceMinor, currency: cell.currency).decimal
                    print("  \(period) \(cell.productId) \(cell.currency) \(price) \(cell.isReturn ? "return" : "sale"): Apple \(d.appleUnits), ledger \(d.ledgerUnits)"
                        + (d.ledgerTransactions.isEmpty ? "" : "; ledger's transactions: \(d.ledgerTransactions.joined(separator: ", "))"))
                }
                if !result.differences.isEmpty || !result.unknownProducts.isEmpty { agree = false }
            }
            return agree
        }
        if !allAgree {
            FileHandle.standardError.write(Data("the ledger and App Store Connect's reports differ\n".utf8))
            throw ExitCode(1)
        }
    }
}
