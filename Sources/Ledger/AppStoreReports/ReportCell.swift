/// One paid transaction or refund as the ledger recorded it (from its revenue lines), for
/// comparison with an App Store Connect report.
public struct LedgerReportLine: Sendable, Hashable {
    public var transactionId: String
    public var productId: String
    /// `YYYY-MM-DD` in the report's time zone (Pacific for the sales reports of worldwide
    /// agreements); the caller computes it: a sale on its purchase day, a refund on its refund
    /// day.
    public var day: String
    /// ISO 4217, upper case.
    public var currency: String
    /// Price of one unit in minor units of `currency`, never negative.
    public var unitPriceMinor: Int64
    /// Units, negative for a refund (the comparison counts magnitudes, so a positive refund
    /// count is read the same).
    public var units: Int64
    public var isRefund: Bool

    public init(
        transactionId: String, productId: String, day: String, currency: String, unitPriceMinor: Int64,
        units: Int64, isRefund: Bool
    ) {
        self.transactionId = transactionId
        self.productId = productId
        self.day = day
        self.currency = currency
        self.unitPriceMinor = unitPriceMinor
        self.units = units
        self.isRefund = isRefund
    }
}

/// The key both sides are summed under: Apple's rows carry no transaction id, so a report and
/// the ledger agree or differ per period, product, currency, unit price and sale-or-return.
///
/// Countries are not part of the key: the ledger does not know the storefront of every sale, so
/// Apple's units are summed over countries (and kept for display in `ReportDifference`).
public struct ReportCell: Sendable, Hashable, Comparable, Codable {
    /// The report line's period, `YYYY-MM-DD`, inclusive: one day in a daily sales report, the
    /// fiscal month in a financial report.
    public var periodStart: String
    public var periodEnd: String
    /// The catalog's product id, or "sku:" + the SKU when no product maps to the report's SKU.
    public var productId: String
    public var currency: String
    /// Price of one unit in minor units of `currency`.
    public var unitPriceMinor: Int64
    public var isReturn: Bool

    public init(
        periodStart: String, periodEnd: String, productId: String, currency: String, unitPriceMinor: Int64,
        isReturn: Bool
    ) {
        self.periodStart = periodStart
        self.periodEnd = periodEnd
        self.productId = productId
        self.currency = currency
        self.unitPriceMinor = unitPriceMinor
        self.isReturn = isReturn
    }

    /// By period, then product, currency, price, sales before returns.
    public static func < (a: ReportCell, b: ReportCell) -> Bool {
        (a.periodStart, a.periodEnd, a.productId, a.currency, a.unitPriceMinor, a.isReturn ? 1 : 0)
            < (b.periodStart, b.periodEnd, b.productId, b.currency, b.unitPriceMinor, b.isReturn ? 1 : 0)
    }
}

/// A cell where Apple's units and the ledger's differ, or that only one side has.
public struct ReportDifference: Sendable, Hashable, Codable {
    public var cell: ReportCell
    /// Units Apple reports in the cell, summed over countries, as a magnitude (a return cell of
    /// 2 is two units returned).
    public var appleUnits: Int64
    /// The ledger's units in the cell, as a magnitude.
    public var ledgerUnits: Int64
    /// Countries of Apple's rows in the cell, sorted.
    public var appleCountries: [String]
    /// Transaction ids behind the ledger's side of the cell, sorted: the purchases to look at
    /// when Apple counted one the ledger did not, or the reverse.
    public var ledgerTransactions: [String]

    public init(cell: ReportCell, appleUnits: Int64, ledgerUnits: Int64, appleCountries: [String], ledgerTransactions: [String]) {
        self.cell = cell
        self.appleUnits = appleUnits
        self.ledgerUnits = ledgerUnits
        self.appleCountries = appleCountries
        self.ledgerTransactions = ledgerTransactions
    }
}
