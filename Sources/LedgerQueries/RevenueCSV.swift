import Ledger

/// The revenue report as CSV (RFC 4180, opened as it is by a spreadsheet): one implementation
/// for `audit revenue --format csv` and the console's download. Amounts are written in major
/// units from the integers, never through floating point.
///
/// Text cells (the group's key, a product id, the currency) that a spreadsheet would read as a
/// formula (beginning with `=`, `+`, `-`, `@`, a tab or a carriage return) are prefixed with a
/// single quote, as OWASP's CSV injection guidance says: a product id or a currency Apple's
/// data names `=HYPERLINK(…)` stays text. The figures are numbers and stay as they are, a
/// negative one included.
///
/// Columns are only ever added at the end (`tax` and `proceeds_estimated` came after
/// `proceeds`, `bundle_id` after them), so a spreadsheet or script that reads them by position
/// keeps working.
extension RevenueReport {
    public static let csvColumns = [
        "purchases", "refunds", "gross", "refunded", "net", "commission", "proceeds", "tax", "proceeds_estimated", "bundle_id",
    ]

    public var csv: String {
        var lines = [([query.groupBy.rawValue, "currency"] + Self.csvColumns).map(Self.textField).joined(separator: ",")]
        for row in rows {
            lines.append(([Self.textField(row.key), Self.textField(row.currency)] + row.cells.map(Self.field) + [Self.textField(row.bundleId)])
                .joined(separator: ","))
        }
        for total in totals {
            lines.append(([Self.textField("total"), Self.textField(total.currency)] + total.cells.map(Self.field) + [""]).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// What a spreadsheet reads as the start of a formula (OWASP, CSV injection).
    static let formulaStarts: Set<Unicode.Scalar> = ["=", "+", "-", "@", "\t", "\r"]
    /// What makes RFC 4180 quote a field.
    static let quoted: Set<Unicode.Scalar> = [",", "\"", "\r", "\n"]

    /// A text cell: guarded against formulas, then quoted as RFC 4180 needs.
    static func textField(_ text: String) -> String { field(formulaGuarded(text)) }

    /// `text` with a leading `'` when its first character would start a formula.
    static func formulaGuarded(_ text: String) -> String {
        guard let first = text.unicodeScalars.first, formulaStarts.contains(first) else { return text }
        return "'" + text
    }

    /// Quoted when it holds a comma, a quote, a carriage return or a line feed; quotes doubled.
    /// Scalars, not characters: `"\r\n"` is one `Character`, a lone `"\n"` another.
    static func field(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { quoted.contains($0) }) else { return text }
        return "\"" + text.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }
}

extension RevenueRow {
    /// The row's figures as text, money in major units of its currency, in the order of
    /// `RevenueReport.csvColumns`; `proceeds_estimated` is `true` or `false`.
    public var cells: [String] {
        func money(_ minor: Int64) -> String { Money(minorUnits: minor, currency: currency).decimal }
        return [
            String(purchases), String(refunds), money(grossMinor), money(refundedMinor), money(netMinor), money(commissionMinor),
            money(proceedsMinor), money(taxMinor), proceedsEstimated ? "true" : "false",
        ]
    }
}
