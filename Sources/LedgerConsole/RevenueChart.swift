import Ledger
import LedgerQueries
import LedgerService

/// Net revenue (above the line) and refunds (below) over time for one currency, as SVG drawn on
/// the server: no script, no chart library, readable without JavaScript. Heights are scaled in
/// integers from minor units; labels are the report's own decimals.
struct RevenueChart: Sendable {
    let rows: [RevenueRow]
    let currency: String
    let grouping: RevenueQuery.Grouping

    var svg: String {
        let width = 960, height = 220, left = 70, top = 24, bottom = 28
        let plot = height - top - bottom
        let maxNet = max(rows.map { max($0.netMinor, 0) }.max() ?? 0, 1)
        let maxRefund = rows.map(\.refundedMinor).max() ?? 0
        let scale = maxNet + maxRefund
        let zero = top + Int((Int64(plot) * maxNet) / max(scale, 1))
        let step = rows.isEmpty ? 0 : (width - left - 10) / rows.count
        let bar = min(48, max(1, step * 7 / 10))
        var out = "<svg class=\"chart\" role=\"img\" viewBox=\"0 0 \(width) \(height)\" width=\"\(width)\" height=\"\(height)\""
        out += " aria-label=\"Net revenue and refunds in \(escape(currency)) by \(grouping.rawValue)\">"
        out += "<text x=\"8\" y=\"16\">\(escape(currency)) · net (blue) and refunds (red) by \(grouping.rawValue)</text>"
        out += "<text x=\"8\" y=\"\(top + 10)\">\(Money(minorUnits: maxNet, currency: currency).decimal)</text>"
        out += "<line x1=\"\(left)\" y1=\"\(zero)\" x2=\"\(width - 10)\" y2=\"\(zero)\" stroke=\"#5b6475\"/>"
        for (index, row) in rows.enumerated() {
            let x = left + index * step
            let net = max(row.netMinor, 0)
            let up = Int((Int64(plot) * net) / max(scale, 1))
            let down = Int((Int64(plot) * row.refundedMinor) / max(scale, 1))
            let title = "\(row.key): net \(Money(minorUnits: row.netMinor, currency: currency).decimal), refunds \(Money(minorUnits: row.refundedMinor, currency: currency).decimal)"
            if up > 0 {
                out += "<rect class=\"net\" x=\"\(x)\" y=\"\(zero - up)\" width=\"\(bar)\" height=\"\(up)\"><title>\(escape(title))</title></rect>"
            }
            if down > 0 {
                out += "<rect class=\"refunds\" x=\"\(x)\" y=\"\(zero)\" width=\"\(bar)\" height=\"\(down)\"><title>\(escape(title))</title></rect>"
            }
            // A label every few bars so they never overlap.
            if index % max(1, rows.count / 8) == 0 {
                out += "<text x=\"\(x)\" y=\"\(height - 8)\">\(escape(row.key))</text>"
            }
        }
        if rows.isEmpty { out += "<text x=\"\(left)\" y=\"\(zero - 8)\">no purchases or refunds in this period</text>" }
        return out + "</svg>"
    }

    private func escape(_ text: String) -> String { ConsoleHTML.escape(text) }
}
