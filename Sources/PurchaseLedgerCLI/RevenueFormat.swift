import Ledger
import LedgerQueries
import LedgerService

/// The revenue report as CSV (RFC 4180, opened as it is by a spreadsheet) and as a table.
/// Amounts are written in major units from the integers, never through floating point.
package enum RevenueFormat {
    static let columns = RevenueReport.csvColumns

    static func cells(_ row: RevenueRow) -> [String] { row.cells }

    static func csv(_ report: RevenueReport) -> String { report.csv }

    package static func table(_ report: RevenueReport) -> String {
        let q = report.query
        var out = "revenue \(q.from) to \(q.to), \(q.environment), by \(q.groupBy.rawValue), commission \(q.commission.rawValue)\n"
        let header = [q.groupBy.rawValue, "currency"] + columns
        var body = report.rows.map { [$0.key, $0.currency] + cells($0) + [$0.bundleId] }
        if report.rows.isEmpty { return out + "no purchases or refunds in this period\n" }
        body += report.totals.map { ["total", $0.currency] + cells($0) + [""] }
        let widths = header.indices.map { column in ([header] + body).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                let pad = String(repeating: " ", count: widths[index] - cell.count)
                // Text (the key, the currency, the app) to the left, figures to the right.
                return index < 2 || index == cells.count - 1 ? cell + pad : pad + cell
            }.joined(separator: "  ")
        }
        out += line(header) + "\n"
        for (index, row) in body.enumerated() {
            if index == report.rows.count { out += widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n" }
            out += line(row) + "\n"
        }
        return out
    }
}
