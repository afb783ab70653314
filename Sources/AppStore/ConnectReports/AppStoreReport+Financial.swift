/// Reading the financial detail report (`FINANCE_DETAIL`, "All Countries or Regions
/// (Detailed)"), by Apple fiscal month:
///
/// ```
/// Vendor Name<TAB>...            lines "name<TAB>value" before the columns
/// Start Date<TAB>10/01/2026
/// End Date<TAB>10/28/2026
/// Transaction Date<TAB>Settlement Date<TAB>Apple Identifier<TAB>SKU<TAB>...<TAB>Region
/// rows
///
/// Country Of Sale<TAB>Partner Share Currency<TAB>Quantity<TAB>Extended Partner Share
/// per-country totals                                 (not read)
/// ```
///
/// See https://developer.apple.com/help/app-store-connect/reference/financial-report-fields:
/// `Quantity` is signed, `Partner Share` is per unit and always positive, `Sale or Return` is
/// "S" or "R". Only collected money appears, at real exchange rates, so it does not match the
/// sales report exactly.
extension AppStoreReport {
    /// The columns this reader uses; Settlement Date, Developer Name, Extended Partner Share,
    /// Promo Code, Order Type and Region are ignored.
    static let financialColumns = [
        "Transaction Date", "Apple Identifier", "SKU", "Product Type Identifier", "Country of Sale",
        "Quantity", "Customer Price", "Customer Currency", "Sale or Return",
    ]

    static func parseFinancial(_ rows: [ReportRow], header: ReportRow) throws(AppStoreReportError) -> AppStoreReport {
        let columns = ReportColumns(header.fields)
        try columns.require(financialColumns, line: header.number, report: "financial report")

        // The period lines before the columns.
        var headerStart: String?
        var headerEnd: String?
        for row in rows where row.number < header.number && row.fields.count >= 2 {
            switch row.fields[0].lowercased() {
            case "start date": headerStart = try ReportValue.day(row.fields[1], line: row.number, column: "Start Date")
            case "end date": headerEnd = try ReportValue.day(row.fields[1], line: row.number, column: "End Date")
            default: break
            }
        }

        var lines: [AppStoreReportLine] = []
        var first: String?
        var last: String?
        for row in rows where row.number > header.number {
            if isEndOfRows(row, after: first != nil) { break }
            if row.isBlank { continue }
            func value(_ name: String) -> String { columns.value(name, in: row) }
            let day = try ReportValue.day(value("Transaction Date"), line: row.number, column: "Transaction Date")
            first = min(first ?? day, day)
            last = max(last ?? day, day)

            let productType = value("Product Type Identifier")
            guard inAppPurchaseTypes.contains(productType.uppercased()) else { continue }
            let isReturn: Bool
            switch value("Sale or Return").uppercased() {
            case "S": isReturn = false
            case "R": isReturn = true
            case let other:
                throw AppStoreReportError("\"\(other)\" is neither S nor R", line: row.number, column: "Sale or Return")
            }
            let currency = try ReportValue.currency(value("Customer Currency"), line: row.number, column: "Customer Currency")
            let quantity = try ReportValue.units(value("Quantity"), line: row.number, column: "Quantity")
            // Returns carry a negative quantity and often a negative price; the S/R column is
            // the authority, and a return's sign is kept in its units alone.
            let price = try ReportValue.minorUnits(
                value("Customer Price"), currency: currency, line: row.number, column: "Customer Price")
            let share = try partnerShare(of: row, columns: columns)
            lines.append(
                AppStoreReportLine(
                    periodStart: "", periodEnd: "", sku: value("SKU"), appleIdentifier: value("Apple Identifier"),
                    title: value("Title"), productType: productType, country: value("Country of Sale"),
                    currency: currency, customerPriceMinor: abs(price), units: isReturn ? -abs(quantity) : quantity,
                    isReturn: isReturn, proceedsMinor: share?.minor, proceedsCurrency: share?.currency))
        }

        // The fiscal period is the whole report's: every line belongs to all of it.
        let start = headerStart ?? first ?? ""
        let end = headerEnd ?? last ?? ""
        for index in lines.indices {
            lines[index].periodStart = start
            lines[index].periodEnd = end
        }
        return AppStoreReport(kind: .financial, periodStart: start, periodEnd: end, lines: lines)
    }

    /// True at the first line that is not a transaction row: a blank line once rows have begun
    /// (the per-country summary follows it), the summary's own column line, or a `Total_`
    /// line of the older report layouts. Nothing after it is read.
    private static func isEndOfRows(_ row: ReportRow, after rowsBegan: Bool) -> Bool {
        if row.isBlank { return rowsBegan }
        let first = row.fields[0].lowercased()
        return first == "country of sale" || first.hasPrefix("total_")
    }

    /// `Partner Share` per unit in `Partner Share Currency`; nil when either is absent or the
    /// share is finer than its currency.
    private static func partnerShare(
        of row: ReportRow, columns: ReportColumns
    ) throws(AppStoreReportError) -> (minor: Int64, currency: String)? {
        let text = columns.value("Partner Share", in: row)
        let named = columns.value("Partner Share Currency", in: row)
        guard !text.isEmpty, !named.isEmpty else { return nil }
        let currency = try ReportValue.currency(named, line: row.number, column: "Partner Share Currency")
        guard let minor = try ReportValue.exactMinorUnits(text, currency: currency, line: row.number, column: "Partner Share")
        else { return nil }
        return (abs(minor), currency)
    }
}
