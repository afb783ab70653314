import Ledger

/// The revenue report as CSV (RFC 4180, opened as it is by a spreadsheet): one implementation
/// for `audit revenue --format csv` and the console's download. Amounts are written in major
/// units from the integers, never through floating point.
extension RevenueReport {
    public static let csvColumns = ["purchases", "refunds", "gross", "refunded", "net", "commission", "proceeds"]

    public var csv: String {
        func field(_ text: String) -> String {
            text.contains(where: { ",\"\r\n".contains($0) }) ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
        }
        var lines = [([query.groupBy.rawValue, "currency"] + Self.csvColumns).joined(separator: ",")]
        for row in rows { lines.append(([row.key, row.currency] + row.cells).map(field).joined(separator: ",")) }
        for total in totals { lines.append((["total", total.currency] + total.cells).map(field).joined(separator: ",")) }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}

extension RevenueRow {
    /// The row's figures as text, money in major units of its currency.
    public var cells: [String] {
        func money(_ minor: Int64) -> String { Money(minorUnits: minor, currency: currency).decimal }
        return [
            String(purchases), String(refunds), money(grossMinor), money(refundedMinor), money(netMinor), money(commissionMinor),
            money(proceedsMinor),
        ]
    }
}
