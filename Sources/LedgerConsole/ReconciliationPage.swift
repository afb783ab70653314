import Foundation
import HTTPTypes
import Hummingbird
import Ledger
import LedgerService
import LedgerStore

/// Finance's question to the ledger: does it agree with what Apple reports? Upload an App Store
/// Connect sales or financial report (the same import as `purchase-ledger reconcile-reports`),
/// then see each cell (period, product, currency, price, sale or return) where Apple's units and
/// the ledger's differ, with the ledger's transactions behind it.
struct ReconciliationPage: Sendable {
    let console: Console
    /// Reports come gzipped and small; a generous cap still bounds a request's memory. Counted
    /// as the body streams in: the read stops at the first byte past it.
    static let maximumUpload = 32 << 20

    func register<Context: ConsoleRequestContext>(on router: Router<Context>, routes: ConsoleRoutes<Context>) {
        router.get("console/reconciliation") { request, context in await routes.guarded(.reconciliation, request, context) { session in
            let reports = try await console.reads.appStoreReports()
            return console.renderer.page("reconciliation", title: "Reconciliation with App Store Connect", area: .reconciliation, session: session, values: [
                "csrf": session.csrfToken,
                "reports": reports.map { recorded, report in
                    ["href": ConsoleLinks.reconciliation(report.documentSha256), "kind": report.kind, "periodStart": report.periodStart, "periodEnd": report.periodEnd,
                     "fileName": report.fileName ?? "", "lines": report.lines.count,
                     "recordedAt": RevenueDay.iso8601(recorded)] as [String: Any]
                },
            ])
        } }
        // The session and role are checked before a byte of the body is read; the CSRF token,
        // the form's first field, before any of the file is kept (ConsoleUpload).
        router.post("console/reconciliation") { request, context in await routes.guarded(.reconciliation, request, context) { session in
            let upload = try await ConsoleUpload.read(request, csrf: session.csrfToken, limit: Self.maximumUpload)
            guard let file = upload.file(named: "report"), !file.bytes.isEmpty else { throw ConsoleError.badRequest("Choose a report file to upload.") }
            let imported = try await ReportImporter(store: console.service.log.store).importReport(
                file.bytes, fileName: file.fileName,
                metadata: RequestMetadata(requestId: context.requestID, actor: "console:\(session.tokenName)", clientAddress: context.clientAddress))
            return ConsoleRenderer.redirect(ConsoleLinks.reconciliation(imported.report.documentSha256) + (imported.alreadyImported ? "?again=1" : ""))
        } }
        router.get("console/reconciliation/:sha256") { request, context in await routes.guarded(.reconciliation, request, context) { session in
            let name = try context.parameters.require("sha256")
            let app = try console.appFilter(request.uri.queryParameters.get("bundle_id"))
            guard EvidenceDocument.isDocumentName(name),
                  let (report, whole) = try await console.reads.reconciliation(ofReport: name.lowercased(), commission: console.commission)
            else { throw ConsoleError.notFound("No report \(name) was imported.") }
            // One app's cells when the filter names one; other apps' lines are no served app's,
            // so they stay listed apart either way.
            var result = whole
            if let app { result.cells = whole.cells.filter { $0.cell.bundleId == app } }
            func money(_ minor: Int64, _ currency: String) -> String { Money(minorUnits: minor, currency: currency).decimal }
            return console.renderer.page("reconciliation-report", title: "Reconciliation: \(report.kind) report \(report.periodStart) – \(report.periodEnd)",
                                         area: .reconciliation, session: session, values: [
                "again": request.uri.queryParameters.get("again") != nil,
                "sha256": report.documentSha256, "documentHref": ConsoleLinks.document(report.documentSha256),
                "apps": console.appChoices(selected: app), "filtered": app != nil, "filteredApp": app ?? "",
                "filterHref": ConsoleLinks.reconciliation(report.documentSha256),
                "fileName": report.fileName ?? "", "kind": report.kind,
                "financial": report.kind == "financial",
                "compared": result.cellsCompared, "matching": result.cellsMatching, "differing": result.differences.count,
                "agrees": result.agrees,
                "proceeds": Self.proceedsTotals(result).map { ["currency": $0.currency, "apple": money($0.apple, $0.currency), "ledger": money($0.ledger, $0.currency)] },
                "otherApps": result.otherApps.map { line in
                    ["sku": line.sku, "appleIdentifier": line.appleIdentifier, "title": line.title, "units": line.units,
                     "proceeds": line.proceedsMinor.map { money($0, line.currency) } ?? "–", "currency": line.currency] as [String: Any]
                },
                "differences": result.differences.map { d in
                    ["period": d.cell.periodStart == d.cell.periodEnd ? d.cell.periodStart : "\(d.cell.periodStart) – \(d.cell.periodEnd)",
                     "app": d.cell.bundleId, "productId": d.cell.productId, "currency": d.cell.currency, "price": money(d.cell.unitPriceMinor, d.cell.currency),
                     "type": d.cell.isReturn ? "return" : "sale", "apple": d.appleUnits, "ledger": d.ledgerUnits,
                     "country": d.cell.country.isEmpty ? "all" : d.cell.country,
                     "appleProceeds": d.appleProceedsMinor.map { money($0, d.proceedsCurrency) } ?? "–",
                     "ledgerProceeds": d.ledgerProceedsMinor.map { money($0, d.proceedsCurrency) } ?? "–",
                     "estimated": d.ledgerProceedsEstimated,
                     "countries": d.appleCountries.joined(separator: ", "),
                     "missing": d.differsInMoneyOnly
                        ? "the same units, other proceeds"
                        : d.appleUnits > d.ledgerUnits ? "Apple counted \(d.appleUnits - d.ledgerUnits) the ledger did not" : "the ledger counted \(d.ledgerUnits - d.appleUnits) Apple did not",
                     "transactions": d.ledgerTransactions.map { ["id": $0, "href": ConsoleLinks.lookup($0)] }] as [String: Any]
                },
            ])
        } }
    }

    /// Both sides' proceeds per currency over the cells where both state them.
    static func proceedsTotals(_ result: ReportReconciliation) -> [(currency: String, apple: Int64, ledger: Int64)] {
        var totals: [String: (apple: Int64, ledger: Int64)] = [:]
        for cell in result.cells {
            guard let apple = cell.appleProceedsMinor, let ledger = cell.ledgerProceedsMinor else { continue }
            let sum = totals[cell.proceedsCurrency] ?? (0, 0)
            totals[cell.proceedsCurrency] = (sum.apple &+ apple, sum.ledger &+ ledger)
        }
        return totals.keys.sorted().compactMap { key in totals[key].map { (key, $0.apple, $0.ledger) } }
    }
}
