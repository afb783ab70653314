/// Writes the financial detail report ("All Countries or Regions (Detailed)", `FINANCE_DETAIL`):
/// "name<TAB>value" lines with the period, the column line, one row per transaction day,
/// product, country, currency, price and sale-or-return, then a blank line and the per-country
/// totals.
///
/// Fields as in https://developer.apple.com/help/app-store-connect/reference/financial-report-fields:
/// `Quantity` signed, `Partner Share` per unit and always positive (the sale's proceeds, see
/// `ReportEntry.proceedsMinor`), `Extended Partner Share` the quantity times the share,
/// `Partner Share Currency` the customer's currency, `Sale or Return` "S" or "R". Rows with
/// different shares (before and after a tax change) stay apart. The simulator settles every
/// transaction on its own day (Apple settles days or weeks later) and collects every payment.
enum FinancialDetailReport {
    static let columns = [
        "Transaction Date", "Settlement Date", "Apple Identifier", "SKU", "Title", "Developer Name",
        "Product Type Identifier", "Country of Sale", "Quantity", "Partner Share", "Extended Partner Share",
        "Partner Share Currency", "Customer Price", "Customer Currency", "Sale or Return", "Promo Code", "Order Type",
        "Region",
    ]

    /// The per-country summary's column line, spelled "Country Of Sale" as Apple's is.
    static let summaryColumns = ["Country Of Sale", "Partner Share Currency", "Quantity", "Extended Partner Share"]

    /// What rows are summed under: everything a row shows except its quantity.
    private struct Key: Hashable {
        var day: ReportFormat.Day
        var product: SimulatedProduct
        var appleIdentifier: String
        var productType: String
        var country: String
        var currency: String
        /// Minor units of `currency`, per unit.
        var unitPriceMinor: Int64
        /// Partner Share: minor units of `currency`, per unit.
        var proceedsMinor: Int64
        var isReturn: Bool
    }

    private struct CountryKey: Hashable {
        var country: String
        var currency: String
    }

    /// The report for `from` through `to` from `entries` (already limited to those days).
    static func text(_ entries: [ReportEntry], from: ReportFormat.Day, to: ReportFormat.Day) -> String {
        var quantities: [Key: Int64] = [:]
        for entry in entries {
            let key = Key(
                day: ReportFormat.day(containing: entry.timeMs), product: entry.product, appleIdentifier: entry.appleIdentifier, productType: entry.productType,
                country: entry.country, currency: entry.currency, unitPriceMinor: entry.unitPriceMinor,
                proceedsMinor: entry.proceedsMinor, isReturn: entry.isReturn)
            quantities[key, default: 0] += entry.units
        }
        // By day (as "YYYY-MM-DD", which sorts as days do, unlike Apple's MM/DD/YYYY), then text.
        let rows = quantities.map { key, quantity in (key.day.iso, row(key, quantity: quantity)) }.sorted { $0 < $1 }

        var totals: [CountryKey: (quantity: Int64, extendedShare: Int64)] = [:]
        for (key, quantity) in quantities {
            let share = key.proceedsMinor
            totals[CountryKey(country: key.country, currency: key.currency), default: (0, 0)].quantity += quantity
            totals[CountryKey(country: key.country, currency: key.currency), default: (0, 0)].extendedShare += quantity * share
        }
        let summary = totals.map { key, total in
            [key.country, key.currency, String(total.quantity), ReportFormat.decimal(total.extendedShare, currency: key.currency)]
                .joined(separator: "\t")
        }.sorted()

        var lines = [
            "Vendor Name\t\(SalesSummaryReport.developer)", "Start Date\t\(from.apple)", "End Date\t\(to.apple)",
            columns.joined(separator: "\t"),
        ]
        lines += rows.map { $0.1 }
        lines += ["", summaryColumns.joined(separator: "\t")]
        lines += summary
        return lines.joined(separator: "\n") + "\n"
    }

    private static func row(_ key: Key, quantity: Int64) -> String {
        let price = key.unitPriceMinor
        let share = key.proceedsMinor
        let values: [String: String] = [
            "Transaction Date": key.day.apple, "Settlement Date": key.day.apple,
            "Apple Identifier": key.appleIdentifier, "SKU": key.product.reportSKU,
            "Title": key.product.productId, "Developer Name": SalesSummaryReport.developer,
            "Product Type Identifier": key.productType, "Country of Sale": key.country, "Quantity": String(quantity),
            "Partner Share": ReportFormat.decimal(share, currency: key.currency),
            "Extended Partner Share": ReportFormat.decimal(quantity * share, currency: key.currency),
            "Partner Share Currency": key.currency,
            "Customer Price": ReportFormat.decimal(key.isReturn ? -price : price, currency: key.currency),
            "Customer Currency": key.currency, "Sale or Return": key.isReturn ? "R" : "S",
            "Region": region(ofCountry: key.country),
        ]
        return columns.map { values[$0] ?? "" }.joined(separator: "\t")
    }

    /// Apple's settlement region of a sale in `country` (alpha-2) for the simulator's six
    /// territories; "Rest of World" for the others, whose regions the simulator does not keep.
    private static func region(ofCountry country: String) -> String {
        switch country {
        case "US": "Americas"
        case "DE", "FR": "Euro-Zone"
        case "GB": "United Kingdom"
        case "JP": "Japan"
        case "BR": "Brazil"
        default: "Rest of World"
        }
    }
}
