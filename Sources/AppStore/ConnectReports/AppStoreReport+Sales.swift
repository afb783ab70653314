/// Reading the Sales and Trends summary sales report (`SALES`, `SUMMARY`, version 1_0 and
/// later): a header line, then one row per day, product, country, currency, price and a few
/// more keys, with summed `Units`.
///
/// See https://developer.apple.com/help/app-store-connect/reference/summary-sales-report:
/// `Units` and `Customer Price` are negative for refunds, `Customer Price` and `Developer
/// Proceeds` are per unit, dates are MM/DD/YYYY in the agreement's time zone (Pacific for
/// worldwide agreements).
extension AppStoreReport {
    /// The columns this reader uses; the others (Provider, Developer, Device, ...) are ignored.
    static let salesColumns = [
        "SKU", "Title", "Product Type Identifier", "Units", "Begin Date", "End Date",
        "Customer Currency", "Country Code", "Apple Identifier", "Customer Price",
    ]

    static func parseSales(_ rows: [ReportRow], header: ReportRow) throws(AppStoreReportError) -> AppStoreReport {
        let columns = ReportColumns(header.fields)
        try columns.require(salesColumns, line: header.number, report: "sales summary report")
        var lines: [AppStoreReportLine] = []
        var first: String?
        var last: String?
        for row in rows where row.number > header.number && !row.isBlank {
            func value(_ name: String) -> String { columns.value(name, in: row) }
            // Every row dates the report, app downloads included, so every row's dates are read.
            let begin = try ReportValue.day(value("Begin Date"), line: row.number, column: "Begin Date")
            let end = try ReportValue.day(value("End Date"), line: row.number, column: "End Date")
            guard begin <= end else {
                throw AppStoreReportError("Begin Date \(begin) is after End Date \(end)", line: row.number)
            }
            first = min(first ?? begin, begin)
            last = max(last ?? end, end)

            let productType = value("Product Type Identifier")
            guard inAppPurchaseTypes.contains(productType.uppercased()) else { continue }
            let currency = try ReportValue.currency(value("Customer Currency"), line: row.number, column: "Customer Currency")
            let units = try ReportValue.units(value("Units"), line: row.number, column: "Units")
            let price = try ReportValue.minorUnits(
                value("Customer Price"), currency: currency, line: row.number, column: "Customer Price")
            // Apple marks a refund with negative units, a negative price, or both: either makes
            // the row a return, whose sign then lives in the units alone.
            let isReturn = units < 0 || price < 0
            let proceeds = try developerProceeds(of: row, columns: columns, customerCurrency: currency)
            lines.append(
                AppStoreReportLine(
                    periodStart: begin, periodEnd: end, sku: value("SKU"), appleIdentifier: value("Apple Identifier"),
                    title: value("Title"), productType: productType, country: value("Country Code"),
                    currency: currency, customerPriceMinor: abs(price), units: isReturn ? -abs(units) : units,
                    isReturn: isReturn, proceedsMinor: proceeds?.minor, proceedsCurrency: proceeds?.currency))
        }
        return AppStoreReport(kind: .sales, periodStart: first ?? "", periodEnd: last ?? "", lines: lines)
    }

    /// `Developer Proceeds` per unit in `Currency of Proceeds` (the customer's currency when that
    /// column is absent or empty); nil when there is none or it is finer than the currency.
    private static func developerProceeds(
        of row: ReportRow, columns: ReportColumns, customerCurrency: String
    ) throws(AppStoreReportError) -> (minor: Int64, currency: String)? {
        let text = columns.value("Developer Proceeds", in: row)
        guard !text.isEmpty else { return nil }
        let named = columns.value("Currency of Proceeds", in: row)
        let currency = try named.isEmpty
            ? customerCurrency : ReportValue.currency(named, line: row.number, column: "Currency of Proceeds")
        guard let minor = try ReportValue.exactMinorUnits(
            text, currency: currency, line: row.number, column: "Developer Proceeds")
        else { return nil }
        return (abs(minor), currency)
    }
}
