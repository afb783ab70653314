/// The in-app purchase lines of one App Store Connect report, read from its tab-separated text.
///
/// Two reports are understood:
/// - the Sales and Trends *summary sales report* (`SALES`/`SUMMARY`): one header line, then rows
///   aggregated per day, product, country, currency and price, at click-to-buy time;
/// - the *financial detail report* (`FINANCE_DETAIL`, "All countries or regions (detailed)"):
///   `Start Date`/`End Date` lines, a column line, rows, then a per-country summary that is not
///   read.
///
/// Both are aggregates: no transaction or order id, rows carry a quantity. Reconcile them per
/// cell (`ReportReconciliation`), never per transaction. Amounts are integers in minor units of
/// their currency, read from the decimal text without floating point. gzip is the caller's to
/// undo. See https://developer.apple.com/help/app-store-connect/reference/summary-sales-report
/// and https://developer.apple.com/help/app-store-connect/reference/financial-report-fields
public struct AppStoreReport: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable {
        case sales
        case financial
    }

    public var kind: Kind
    /// First day covered, `YYYY-MM-DD`: the earliest `Begin Date` of a sales report, the
    /// `Start Date` line of a financial report (else its earliest `Transaction Date`). Empty
    /// when the report has no rows to date it by; set it before comparing such a report.
    public var periodStart: String
    /// Last day covered, `YYYY-MM-DD`, inclusive; see `periodStart`.
    public var periodEnd: String
    /// In-app purchase lines only, in file order; app downloads, updates and restores (IA3,
    /// which carries no money) are left out.
    public var lines: [AppStoreReportLine]

    public init(kind: Kind, periodStart: String, periodEnd: String, lines: [AppStoreReportLine]) {
        self.kind = kind
        self.periodStart = periodStart
        self.periodEnd = periodEnd
        self.lines = lines
    }

    /// Product Type Identifiers of paid in-app purchases: IA1 (IA1-M on Mac), IA9 non-renewing
    /// subscription (IA9-M), IAY auto-renewable subscription (IAY-M), FI1 Mac in-app purchase.
    public static let inAppPurchaseTypes: Set<String> = ["IA1", "IA1-M", "IA9", "IA9-M", "IAY", "IAY-M", "FI1"]

    /// Reads a summary sales report or a financial detail report, telling them apart by their
    /// column names (found by name, not position: Apple adds columns).
    ///
    /// Accepts LF or CRLF, a UTF-8 byte order mark and trailing empty lines. Errors name the
    /// line (1-based) and column; nothing is rounded or guessed.
    public static func parse(_ text: String) throws(AppStoreReportError) -> AppStoreReport {
        let rows = ReportRow.rows(of: text)
        guard let first = rows.first(where: { !$0.isBlank }) else {
            throw AppStoreReportError("the file is empty: \(notAReport)")
        }
        // The sales report's column line is its first line; the financial report's comes after
        // a few "name<TAB>value" lines, so it is looked for.
        if ReportColumns(first.fields).contains(all: ["Product Type Identifier", "Begin Date"]) {
            return try parseSales(rows, header: first)
        }
        if let header = rows.first(where: { ReportColumns($0.fields).contains(all: ["Transaction Date", "Product Type Identifier"]) }) {
            return try parseFinancial(rows, header: header)
        }
        if rows.contains(where: { ReportColumns($0.fields).contains(all: ["Vendor Identifier", "Partner Share"]) }) {
            throw AppStoreReportError(
                "this is a per-region financial report (FINANCIAL); download the financial detail report "
                    + "(FINANCE_DETAIL, all countries or regions, detailed) instead")
        }
        throw AppStoreReportError(notAReport)
    }

    static let notAReport = "not an App Store Connect sales summary or financial report"
}

/// One in-app purchase row of a report.
public struct AppStoreReportLine: Sendable, Hashable, Codable {
    /// The row's `Begin Date` (sales) or the report's period (financial), `YYYY-MM-DD`.
    public var periodStart: String
    /// The row's `End Date` (sales) or the report's period (financial), `YYYY-MM-DD`, inclusive.
    public var periodEnd: String
    /// The SKU set in App Store Connect (often, not always, the product id).
    public var sku: String
    /// The product's Apple ID (adamId), a number as text.
    public var appleIdentifier: String
    public var title: String
    /// Product Type Identifier as in the file: IA1, IAY, IA9, IA1-M, IAY-M, FI1...
    public var productType: String
    /// ISO 3166 alpha-2 territory, as in the file (`Country Code` / `Country of Sale`); StoreKit's
    /// `storefront` is alpha-3.
    public var country: String
    /// `Customer Currency`, ISO 4217, upper case.
    public var currency: String
    /// Price of one unit in minor units of `currency`, tax included; never negative (a return's
    /// sign is in `units`).
    public var customerPriceMinor: Int64
    /// Units, negative for a return or refund.
    public var units: Int64
    /// Financial: `Sale or Return` is "R". Sales: units or price are negative.
    public var isReturn: Bool
    /// What the developer receives per unit (`Developer Proceeds` / `Partner Share`), in minor
    /// units of `proceedsCurrency`, never negative. Nil when the report leaves it out or gives
    /// more decimals than the currency has: it is for display, so it is neither rounded nor
    /// allowed to fail the report.
    public var proceedsMinor: Int64?
    public var proceedsCurrency: String?

    public init(
        periodStart: String, periodEnd: String, sku: String, appleIdentifier: String, title: String,
        productType: String, country: String, currency: String, customerPriceMinor: Int64, units: Int64,
        isReturn: Bool, proceedsMinor: Int64? = nil, proceedsCurrency: String? = nil
    ) {
        self.periodStart = periodStart
        self.periodEnd = periodEnd
        self.sku = sku
        self.appleIdentifier = appleIdentifier
        self.title = title
        self.productType = productType
        self.country = country
        self.currency = currency
        self.customerPriceMinor = customerPriceMinor
        self.units = units
        self.isReturn = isReturn
        self.proceedsMinor = proceedsMinor
        self.proceedsCurrency = proceedsCurrency
    }
}

/// A report that cannot be read, with the line and column at fault when there is one.
public struct AppStoreReportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The whole message, line and column included: "line 4, Customer Price: ...".
    public var message: String
    /// 1-based line of the file.
    public var line: Int?
    public var column: String?

    public init(_ detail: String, line: Int? = nil, column: String? = nil) {
        self.line = line
        self.column = column
        let place = [line.map { "line \($0)" }, column].compactMap { $0 }.joined(separator: ", ")
        self.message = place.isEmpty ? detail : "\(place): \(detail)"
    }

    public var description: String { message }
}
