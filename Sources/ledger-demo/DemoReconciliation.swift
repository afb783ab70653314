import AppleSimulator
import Foundation
import Ledger
import LedgerQueries
import LedgerService
import LedgerStore
import PurchaseLedgerCLI

/// The demo's last chapter: App Store Connect's financial report for the demo's weeks, written by
/// the simulator from its own sales in Apple's format, imported and set against the ledger as
/// `reconcile-reports` and the console's Reconciliation page do.
enum DemoReconciliation {
    static func run(simulator: AppleSimulator, service: PurchaseService, reads: ReadModels) async throws {
        let now = service.clock()
        let from = PacificDay.of(now - 90 * 86_400_000), to = PacificDay.of(now)
        let text = try simulator.financialReport(from: from, to: to)
        let imported = try await ReportImporter(store: service.log.store).importReport(
            Array(text.utf8), fileName: "financial_report_demo.txt", metadata: RequestMetadata(actor: "demo"))
        guard let (_, result) = try await reads.reconciliation(ofReport: imported.report.documentSha256) else { return }
        print("App Store Connect's financial report \(from) – \(to) (purchase-ledger reconcile-reports FILE):")
        print("  \(imported.report.lines.count) in-app lines; \(result.cellsCompared) cells compared, \(result.cellsMatching) agree, \(result.differences.count) differ")
        for difference in result.differences.prefix(5) { print("  " + describeReportCell(difference)) }
        print("")
    }
}
