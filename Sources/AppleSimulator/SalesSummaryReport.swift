/// Writes the Sales and Trends summary sales report: Apple's column line, then one row per
/// product, country, currency, customer price, proceeds and sale-or-return (and subscription
/// new or renewal), with summed units. Two sales at one price with different proceeds (before
/// and after a tax change, or in a subscriber's second year) are two rows, as at Apple.
///
/// Columns as in https://developer.apple.com/help/app-store-connect/reference/summary-sales-report:
/// `Customer Price` and `Developer Proceeds` are per unit, both in the customer's currency
/// (`Currency of Proceeds` = `Customer Currency`); a refund row has negative `Units` and a
/// negative `Customer Price` ("negative values indicate refunds"), its proceeds per unit stay
/// positive.
enum SalesSummaryReport {
    /// Apple's 28 columns, in Apple's order.
    static let columns = [
        "Provider", "Provider Country", "SKU", "Developer", "Title", "Version", "Product Type Identifier", "Units",
        "Developer Proceeds", "Begin Date", "End Date", "Customer Currency", "Country Code", "Currency of Proceeds",
        "Apple Identifier", "Customer Price", "Promo Code", "Parent Identifier", "Subscription", "Period", "Category",
        "CMB", "Device", "Supported Platforms", "Proceeds Reason", "Preserved Pricing", "Client", "Order Type",
    ]

    /// The developer (provider) name the simulator's reports give.
    static let developer = "Simulated Developer"

    /// What rows are summed under: everything a row shows except its units.
    private struct Key: Hashable {
        var product: SimulatedProduct
        var productType: String
        var country: String
        var currency: String
        /// Minor units of `currency`, per unit.
        var unitPriceMinor: Int64
        /// Minor units of `currency`, per unit.
        var proceedsMinor: Int64
        var isReturn: Bool
        var isRenewal: Bool
        var bundleId: String
        var appleIdentifier: String
    }

    /// The report of `day` from `entries` (already limited to that day), rows sorted.
    static func text(_ entries: [ReportEntry], day: ReportFormat.Day) -> String {
        var units: [Key: Int64] = [:]
        for entry in entries {
            let key = Key(
                product: entry.product, productType: entry.productType, country: entry.country, currency: entry.currency,
                unitPriceMinor: entry.unitPriceMinor, proceedsMinor: entry.proceedsMinor, isReturn: entry.isReturn,
                isRenewal: entry.isRenewal, bundleId: entry.bundleId, appleIdentifier: entry.appleIdentifier)
            units[key, default: 0] += entry.units
        }
        // Sorted by their text, which starts with the SKU: the same state writes the same file.
        let rows = units.map { key, count in row(key, units: count, day: day) }.sorted()
        return ([columns.joined(separator: "\t")] + rows).joined(separator: "\n") + "\n"
    }

    private static func row(_ key: Key, units: Int64, day: ReportFormat.Day) -> String {
        let price = key.unitPriceMinor
        let isSubscription = key.product.kind == .autoRenewable
        let values: [String: String] = [
            "Provider": "APPLE", "Provider Country": "US", "SKU": key.product.reportSKU, "Developer": developer,
            // The simulator has no reference names: the title is the product id.
            "Title": key.product.productId, "Version": "", "Product Type Identifier": key.productType,
            "Units": String(units),
            "Developer Proceeds": ReportFormat.decimal(key.proceedsMinor, currency: key.currency),
            "Begin Date": day.apple, "End Date": day.apple, "Customer Currency": key.currency,
            "Country Code": key.country, "Currency of Proceeds": key.currency,
            "Apple Identifier": key.appleIdentifier,
            "Customer Price": ReportFormat.decimal(key.isReturn ? -price : price, currency: key.currency),
            "Parent Identifier": key.bundleId,
            "Subscription": isSubscription ? (key.isRenewal ? "Renewal" : "New") : "",
            "Period": isSubscription ? period(of: key.product) : "",
            "Device": "iPhone", "Supported Platforms": "iOS",
        ]
        return columns.map { values[$0] ?? "" }.joined(separator: "\t")
    }

    /// The subscription's duration as the `Period` column spells it: "7 Days", "1 Month",
    /// "3 Months", "1 Year".
    private static func period(of product: SimulatedProduct) -> String {
        switch product.billingPeriod {
        case .months(12): "1 Year"
        case .months(1): "1 Month"
        case .months(let months): "\(months) Months"
        case .days(1): "1 Day"
        case .days(let days): "\(days) Days"
        }
    }
}
