import AppStore
import Foundation
import Ledger
import LedgerStore
import Postgres

extension ReadModels {
    /// The reports imported, newest first.
    public func appStoreReports() async throws -> [(recordedAtMs: Int64, report: AppStoreReportImported)] {
        try await mappingDatabaseErrors { try await LedgerReads(pool: pool).appStoreReports() }
    }

    /// An imported report set against the ledger's production sales and refunds of its period,
    /// read from the revenue lines (the same lines as the revenue report), by Pacific day as
    /// App Store Connect counts them for worldwide agreements, their proceeds as the revenue
    /// report counts them under `commission`. Nil for an unknown report.
    public func reconciliation(ofReport sha256: String, commission: CommissionPlan = .standard) async throws -> (report: AppStoreReportImported, result: ReportReconciliation)? {
        try await mappingDatabaseErrors {
            let reads = LedgerReads(pool: pool)
            guard let imported = try await reads.appStoreReport(sha256) else { return nil }
            // A report covers the developer account's apps: each line is the app whose catalog
            // names its SKU or Apple id, else whose catalog sells a product of that id (the first
            // app by bundle id when two do); a line no app's catalog maps is another app's.
            let catalogs = try await reads.catalogs()
            typealias AppProduct = (bundleId: String, productId: String)
            var bySku: [String: AppProduct] = [:], byAppleId: [String: AppProduct] = [:], byId: [String: AppProduct] = [:]
            for app in catalogs.byApp.keys.sorted().reversed() {
                for product in catalogs.byApp[app]?.products.values.map({ $0 }) ?? [] {
                    let found = (bundleId: app, productId: product.productId)
                    if let sku = product.sku { bySku[sku] = found }
                    if let id = product.appleId { byAppleId[id] = found }
                    byId[product.productId] = found
                }
            }
            let lines = try await ledgerReportLines(from: imported.periodStart, to: imported.periodEnd, commission: commission)
            let report = AppStoreReport(
                kind: AppStoreReport.Kind(rawValue: imported.kind) ?? .sales, periodStart: imported.periodStart, periodEnd: imported.periodEnd,
                lines: imported.lines)
            let result = ReportReconciliation.compare(report, ledger: lines) { sku, appleId -> AppProduct? in
                bySku[sku] ?? byAppleId[appleId] ?? byId[sku]
            }
            return (imported, result)
        }
    }

    /// The ledger's production sales (by purchase) and refunds (by refund) from the first to the
    /// last Pacific day given, each with its Pacific day. Reversals are left out: App Store
    /// Connect's reports have no line for them. A refund of a share is priced at the share it
    /// refunded, as the simulator's reports write one (Apple's files show no prorated refund we
    /// could read). Proceeds are the revenue report's (`RevenueLineMoney`).
    func ledgerReportLines(from: String, to: String, commission: CommissionPlan) async throws -> [LedgerReportLine] {
        guard let start = PacificDay.startMs(of: from), let endMs = PacificDay.endMs(of: to) else {
            throw LedgerServiceError(.invalidRequest, "the report's period \(from) – \(to) is not two dates")
        }
        return try await withConsistentConnection { [legacy] connection in
            try connection.query("""
                SELECT transaction_id, product_id, line_type, currency, abs(gross_minor), quantity,
                       CASE WHEN line_type = 'sale' THEN purchase_date_ms ELSE refunded_at_ms END,
                       country, abs(\(fragment: RevenueLineMoney.proceeds(commission))), \(fragment: RevenueLineMoney.estimated),
                       coalesce(bundle_id, \(try legacy.name(on: connection)))
                FROM projection_revenue_lines
                WHERE environment = 'Production' AND line_type IN ('sale', 'refund')
                  AND day BETWEEN \(from)::date - 1 AND \(to)::date + 1
                  AND CASE WHEN line_type = 'sale' THEN purchase_date_ms ELSE refunded_at_ms END >= \(start)
                  AND CASE WHEN line_type = 'sale' THEN purchase_date_ms ELSE refunded_at_ms END < \(endMs)
                ORDER BY 7, 1
                """).map { row in
                let quantity = max(try row.decode(5, as: Int64.self), 1)
                let gross: Int64 = try row.decode(4)
                let refund = (try row.decode(2, as: String.self)) == "refund"
                var line = LedgerReportLine(
                    transactionId: try row.decode(0), productId: try row.decode(1), day: PacificDay.of(try row.decode(6)),
                    currency: try row.decode(3), unitPriceMinor: abs(gross) / quantity, units: refund ? -quantity : quantity, isRefund: refund,
                    country: try row.decode(7), proceedsMinor: try row.decode(8), proceedsEstimated: try row.decode(9))
                line.bundleId = try row.decode(10)
                return line
            }
        }
    }
}
