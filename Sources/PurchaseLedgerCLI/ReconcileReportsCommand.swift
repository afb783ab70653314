import ArgumentParser
import EventStore
import Foundation
import Ledger
import LedgerService
import Logging
import LedgerStore
import Postgres
import Primitives

/// `purchase-ledger reconcile-reports FILE...`: imports App Store Connect sales or financial
/// reports (gzip or not, as downloaded) and sets each against the ledger, as the console's
/// Reconciliation page does. Exits 1 when a report and the ledger disagree, so a nightly job
/// can alert on it.
struct ReconcileReportsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconcile-reports",
        abstract: "Import App Store Connect sales or financial reports and compare them with the ledger.",
        discussion: "Each file is kept verbatim and recorded (once per content). Cells are period (Pacific days for Sales and Trends), product (by the catalog's sku or apple_id), country (where the ledger knows it), currency, unit price and sale or return; production only. Each cell compares units and proceeds (Developer Proceeds or Partner Share times units, against the ledger's proceeds under LEDGER_COMMISSION). text prints every cell that differs with the ledger's transactions behind it; json prints every cell. Exit 0 when every report agrees, 1 when one differs or cannot be read.")

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @OptionGroup var database: DatabaseOptions

    @Argument(help: "Report files (.txt or .txt.gz)")
    var files: [String]

    @Option(help: "text or json")
    var format: Format = .text

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
        let commission: CommissionPlan
        do {
            commission = try LedgerConfiguration.commission(from: ProcessInfo.processInfo.environment)
        } catch {
            throw ValidationError(error.message)
        }
        let format = format
        // Imported first, then compared by read models caught up past the imports: a read
        // waits for the projections, and no server may be running to move them.
        let imports = try await database.withReadModels(logger: logger) { _, pool in
            let importer = ReportImporter(store: EventStore(pool: pool, logger: logger))
            var imports: [(file: String, imported: ImportedReport)] = []
            for (file, bytes) in reports {
                imports.append((file, try await importer.importReport(
                    bytes, fileName: URL(fileURLWithPath: file).lastPathComponent, metadata: RequestMetadata(actor: "cli:reconcile-reports"))))
            }
            return imports
        }
        let (allAgree, cells, otherApps) = try await database.withReadModels(logger: logger) { reads, _ in
            var agree = true
            var cells: [ReportCellComparison] = []
            var otherApps: [OtherAppLine] = []
            for (file, imported) in imports {
                let report = imported.report
                guard let (_, result) = try await reads.reconciliation(ofReport: report.documentSha256, commission: commission) else { continue }
                if !result.agrees { agree = false }
                cells += result.cells
                otherApps += result.otherApps
                guard format == .text else { continue }
                print("\(file): \(report.kind) report \(report.periodStart) – \(report.periodEnd), \(report.lines.count) in-app lines\(imported.alreadyImported ? " (imported before)" : "")")
                print("  \(result.cellsCompared) cells compared, \(result.cellsMatching) agree, \(result.differences.count) differ")
                if !result.otherApps.isEmpty {
                    // Not differences: lines of apps this ledger does not serve (or of a product an
                    // app's catalog does not name: add its sku or apple_id to that catalog).
                    print("  \(result.otherApps.count) lines of other apps (no catalog of an app served maps them): "
                        + result.unknownProducts.joined(separator: ", "))
                }
                for d in result.differences { print("  " + Self.describe(d)) }
            }
            return (agree, cells, otherApps)
        }
        if format == .json {
            print(String(decoding: try LedgerJSON.encoder.encode(ReconciliationJSON(cells: cells, otherApps: otherApps)), as: UTF8.self))
        }
        if !allAgree {
            FileHandle.standardError.write(Data("the ledger and App Store Connect's reports differ\n".utf8))
            throw ExitCode(1)
        }
    }

    /// One differing cell as a line: "2026-11-03 com.example.coins100 DEU EUR 0.99 sale: units
    /// Apple 3, ledger 3; proceeds Apple 1.77, ledger 1.74 EUR; ledger's transactions: ...".
    static func describe(_ d: ReportCellComparison) -> String {
        let cell = d.cell
        let price = Money(minorUnits: cell.unitPriceMinor, currency: cell.currency).decimal
        let money = { (minor: Int64?) in minor.map { Money(minorUnits: $0, currency: d.proceedsCurrency).decimal } ?? "none" }
        return "\(cell.period) \(cell.bundleId.isEmpty ? "" : cell.bundleId + " ")\(cell.productId) \(cell.country.isEmpty ? "all countries" : cell.country) \(cell.currency) \(price) \(cell.isReturn ? "return" : "sale"): "
            + "units Apple \(d.appleUnits), ledger \(d.ledgerUnits); proceeds Apple \(money(d.appleProceedsMinor)), ledger \(money(d.ledgerProceedsMinor)) \(d.proceedsCurrency)"
            + (d.ledgerProceedsEstimated ? " (the ledger's estimated, no price point: money not compared)" : "")
            + (d.ledgerTransactions.isEmpty ? "" : "; ledger's transactions: \(d.ledgerTransactions.joined(separator: ", "))")
    }
}

/// docs/cli.md's `reconcile-reports --format json`: every cell of every report given, and the
/// lines of apps the ledger does not serve.
struct ReconciliationJSON: Encodable {
    var cells: [ReportCellComparison]
    var otherApps: [OtherAppLine] = []

    struct Cell: Encodable {
        var period, bundleId, productId, currency, type: String
        /// Null when the cell sums every country (the ledger does not know a sale's storefront).
        /// The nulls are written: a reader sees that a side stated no money, not a missing key.
        @WrittenNull var country: String?
        var appleUnits, ledgerUnits: Int64
        @WrittenNull var appleProceedsMinor: Int64?
        @WrittenNull var ledgerProceedsMinor: Int64?
        var proceedsCurrency: String
        var agrees: Bool
        var transactionIds: [String]

        enum CodingKeys: String, CodingKey {
            case period, country, currency, type, agrees
            case bundleId = "bundle_id"
            case productId = "product_id", appleUnits = "apple_units", ledgerUnits = "ledger_units"
            case appleProceedsMinor = "apple_proceeds_minor", ledgerProceedsMinor = "ledger_proceeds_minor"
            case proceedsCurrency = "proceeds_currency", transactionIds = "transaction_ids"
        }
    }

    enum CodingKeys: String, CodingKey { case cells, agree, differ, otherApps = "other_apps" }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(cells.map { d in
            Cell(period: d.cell.period, bundleId: d.cell.bundleId, productId: d.cell.productId, currency: d.cell.currency, type: d.cell.isReturn ? "return" : "sale",
                 country: d.cell.country.isEmpty ? nil : d.cell.country, appleUnits: d.appleUnits, ledgerUnits: d.ledgerUnits,
                 appleProceedsMinor: d.appleProceedsMinor, ledgerProceedsMinor: d.ledgerProceedsMinor, proceedsCurrency: d.proceedsCurrency,
                 agrees: d.agrees, transactionIds: d.ledgerTransactions)
        }, forKey: .cells)
        try c.encode(cells.filter(\.agrees).count, forKey: .agree)
        try c.encode(cells.filter { !$0.agrees }.count, forKey: .differ)
        // LedgerJSON's encoder writes its keys in snake_case: apple_identifier, proceeds_minor.
        try c.encode(otherApps, forKey: .otherApps)
    }
}

/// A differing cell as `reconcile-reports` prints it; the demo prints its own the same way.
package func describeReportCell(_ difference: ReportCellComparison) -> String {
    ReconcileReportsCommand.describe(difference)
}
