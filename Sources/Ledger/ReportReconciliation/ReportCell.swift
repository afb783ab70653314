import AppStore
import Primitives

/// One paid transaction or refund as the ledger recorded it (from its revenue lines), for
/// comparison with an App Store Connect report.
public struct LedgerReportLine: Sendable, Hashable {
    public var transactionId: String
    public var productId: String
    /// The app it was sold in ("" where one app's report is compared alone).
    public var bundleId: String = ""
    /// `YYYY-MM-DD` in the report's time zone (Pacific for the sales reports of worldwide
    /// agreements); the caller computes it: a sale on its purchase day, a refund on its refund
    /// day.
    public var day: String
    /// ISO 4217, upper case.
    public var currency: String
    /// Price of one unit in minor units of `currency`, never negative; a prorated refund's, the
    /// share it refunded.
    public var unitPriceMinor: Int64
    /// Units, negative for a refund (the comparison counts magnitudes, so a positive refund
    /// count is read the same).
    public var units: Int64
    public var isRefund: Bool
    /// The storefront, ISO 3166-1 alpha-3, or `Storefront.unknown`.
    public var country: String
    /// What Apple pays for the line as the revenue report counts it, in minor units of
    /// `currency`, as a magnitude.
    public var proceedsMinor: Int64
    /// True when no price point priced it, so `proceedsMinor` is the commission plan's estimate.
    public var proceedsEstimated: Bool

    public init(
        transactionId: String, productId: String, day: String, currency: String, unitPriceMinor: Int64,
        units: Int64, isRefund: Bool, country: String = Storefront.unknown, proceedsMinor: Int64 = 0, proceedsEstimated: Bool = true
    ) {
        self.transactionId = transactionId
        self.productId = productId
        self.day = day
        self.currency = currency
        self.unitPriceMinor = unitPriceMinor
        self.units = units
        self.isRefund = isRefund
        self.country = country
        self.proceedsMinor = proceedsMinor
        self.proceedsEstimated = proceedsEstimated
    }
}

/// The key both sides are summed under: Apple's rows carry no transaction id, so a report and
/// the ledger agree or differ per period, product, country, currency, unit price and
/// sale-or-return.
///
/// Countries are compared where both sides know them: when a ledger line of a cell's other keys
/// has no country (a receipt's sale Apple was never asked about), the cells of those keys are
/// summed over countries on both sides (`country` empty), so an unknown storefront never shows
/// as two differences that cancel.
public struct ReportCell: Sendable, Hashable, Comparable, Codable {
    /// The report line's period, `YYYY-MM-DD`, inclusive: one day in a daily sales report, the
    /// fiscal month in a financial report.
    public var periodStart: String
    public var periodEnd: String
    /// The app whose catalog maps the line ("" where one app's report is compared alone).
    public var bundleId: String = ""
    /// The catalog's product id, or "sku:" + the SKU when no product maps to the report's SKU.
    public var productId: String
    /// ISO 3166-1 alpha-3 (Apple's alpha-2 mapped by `ISO3166`; an unmapped code is kept
    /// as Apple wrote it); empty when the cell sums every country.
    public var country: String
    public var currency: String
    /// Price of one unit in minor units of `currency`.
    public var unitPriceMinor: Int64
    public var isReturn: Bool

    public init(
        periodStart: String, periodEnd: String, productId: String, country: String = "", currency: String, unitPriceMinor: Int64,
        isReturn: Bool
    ) {
        self.periodStart = periodStart
        self.periodEnd = periodEnd
        self.productId = productId
        self.country = country
        self.currency = currency
        self.unitPriceMinor = unitPriceMinor
        self.isReturn = isReturn
    }

    /// `YYYY-MM-DD`, or `YYYY-MM-DD/YYYY-MM-DD` for a longer period.
    public var period: String { periodStart == periodEnd ? periodStart : "\(periodStart)/\(periodEnd)" }

    /// By period, then app and product, country, currency, price, sales before returns.
    public static func < (a: ReportCell, b: ReportCell) -> Bool {
        // Swift compares tuples of up to six: the period is one text, the app and product another.
        (a.period, a.bundleId + " " + a.productId, a.country, a.currency, a.unitPriceMinor, a.isReturn ? 1 : 0)
            < (b.period, b.bundleId + " " + b.productId, b.country, b.currency, b.unitPriceMinor, b.isReturn ? 1 : 0)
    }
}

/// One cell compared: Apple's units and proceeds against the ledger's.
public struct ReportCellComparison: Sendable, Hashable, Codable {
    public var cell: ReportCell
    /// Units Apple reports in the cell, as a magnitude (a return cell of 2 is two units returned).
    public var appleUnits: Int64
    /// The ledger's units in the cell, as a magnitude.
    public var ledgerUnits: Int64
    /// Apple's proceeds in the cell (`Developer Proceeds` × units, or `Partner Share` ×
    /// quantity), a magnitude in minor units of `proceedsCurrency`; nil when a row of the cell
    /// gave none, or gave them in another currency than the ledger's.
    public var appleProceedsMinor: Int64?
    /// The ledger's proceeds in the cell, a magnitude, as the revenue report counts them; nil
    /// when Apple paid the cell in another currency, which the ledger cannot compare.
    public var ledgerProceedsMinor: Int64?
    public var proceedsCurrency: String
    /// True when a line of the ledger's side had no price point (its proceeds are estimated).
    public var ledgerProceedsEstimated: Bool
    /// Countries of Apple's rows in the cell, as the report writes them (alpha-2), sorted.
    public var appleCountries: [String]
    /// Transaction ids behind the ledger's side of the cell, sorted: the purchases to look at.
    public var ledgerTransactions: [String]

    public init(
        cell: ReportCell, appleUnits: Int64, ledgerUnits: Int64, appleProceedsMinor: Int64? = nil, ledgerProceedsMinor: Int64? = nil,
        proceedsCurrency: String? = nil, ledgerProceedsEstimated: Bool = false, appleCountries: [String], ledgerTransactions: [String]
    ) {
        self.cell = cell
        self.appleUnits = appleUnits
        self.ledgerUnits = ledgerUnits
        self.appleProceedsMinor = appleProceedsMinor
        self.ledgerProceedsMinor = ledgerProceedsMinor
        self.proceedsCurrency = proceedsCurrency ?? cell.currency
        self.ledgerProceedsEstimated = ledgerProceedsEstimated
        self.appleCountries = appleCountries
        self.ledgerTransactions = ledgerTransactions
    }

    /// The units agree, and so does the money where both sides state it in one currency and
    /// the ledger's is Apple's price points' rather than the commission plan's estimate (an
    /// estimate differs from Apple's figure by rounding alone, which says nothing of the sales).
    public var agrees: Bool {
        guard appleUnits == ledgerUnits else { return false }
        guard let apple = appleProceedsMinor, let ledger = ledgerProceedsMinor, !ledgerProceedsEstimated else { return true }
        return apple == ledger
    }

    /// True when the units agree and the money does not.
    public var differsInMoneyOnly: Bool { appleUnits == ledgerUnits && !agrees }
}

/// A report line of an app the ledger does not serve, as `reconcile-reports` lists it apart.
public struct OtherAppLine: Sendable, Hashable, Codable {
    /// The product's Apple ID, as text.
    public var appleIdentifier: String
    public var sku: String
    public var title: String
    /// Signed: negative for a return.
    public var units: Int64
    /// The line's proceeds in all (per unit × units, signed as the units), in minor units of
    /// `currency`; nil when the report gave none, written null (`reconcile-reports --format
    /// json`): a reader sees no money stated, not a missing key.
    @WrittenNull public var proceedsMinor: Int64?
    public var currency: String

    public init(_ line: AppStoreReportLine) {
        appleIdentifier = line.appleIdentifier
        sku = line.sku
        title = line.title
        units = line.units
        proceedsMinor = line.proceedsMinor.map { perUnit in
            let (total, overflow) = perUnit.multipliedReportingOverflow(by: line.units)
            return overflow ? (line.units < 0 ? .min : .max) : total
        }
        currency = line.proceedsCurrency ?? line.currency
    }
}
