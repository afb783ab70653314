import AppStore
import Primitives

/// An App Store Connect report compared with the ledger, cell by cell (`ReportCell`), in units
/// and in money.
///
/// Both sides are counted in unit magnitudes: a sale cell counts units sold, a return cell units
/// returned, whatever sign either side writes them with. Sales and returns are separate cells,
/// so a refund never cancels a sale out of sight. Lines at a customer price of 0 (free trials,
/// offer-code redemptions) are left out on both sides: no money moved, and the ledger's revenue
/// has no line for them. Money is Apple's proceeds per unit times the units against the
/// ledger's proceeds as its revenue report counts them, in the proceeds' currency.
public struct ReportReconciliation: Sendable, Hashable, Codable {
    public var kind: AppStoreReport.Kind
    public var periodStart: String
    public var periodEnd: String
    /// Every cell on either side, sorted by cell.
    public var cells: [ReportCellComparison]
    /// SKUs of report lines that no catalog product maps to (the Apple identifier, prefixed
    /// "apple:", when the SKU is empty), sorted. With the apps compared (`compare(_:ledger:app:)`)
    /// they are the lines of `otherApps`; compared alone, their cells are keyed "sku:" + SKU.
    public var unknownProducts: [String]
    /// A developer account's report lists every app's lines: those of apps the ledger does not
    /// serve (no catalog of an app it serves maps them), listed apart, never as differences.
    public var otherApps: [OtherAppLine] = []

    public init(
        kind: AppStoreReport.Kind, periodStart: String, periodEnd: String, cells: [ReportCellComparison], unknownProducts: [String],
        otherApps: [OtherAppLine] = []
    ) {
        self.kind = kind
        self.periodStart = periodStart
        self.periodEnd = periodEnd
        self.cells = cells
        self.unknownProducts = unknownProducts
        self.otherApps = otherApps
    }

    /// Cells on either side.
    public var cellsCompared: Int { cells.count }
    /// Cells where both sides count the same units and, where both state it, the same money.
    public var cellsMatching: Int { cells.count - differences.count }
    /// The cells that differ, sorted by cell.
    public var differences: [ReportCellComparison] { cells.filter { !$0.agrees } }
    /// True when every cell agrees and, for one app compared alone, every product is known.
    /// Compared with the apps, an unmapped line is another app's, listed apart: not the
    /// ledger's to agree with.
    public var agrees: Bool { (unknownProducts.isEmpty || !otherApps.isEmpty) && cells.allSatisfy(\.agrees) }

    /// Compares `report` with one app's paid transactions and refunds: `product` maps a report
    /// line's SKU and Apple identifier to the catalog's product id; a line it does not map is
    /// an unknown product of that app, a difference.
    public static func compare(
        _ report: AppStoreReport, ledger: [LedgerReportLine],
        product: (_ sku: String, _ appleIdentifier: String) -> String?
    ) -> ReportReconciliation {
        compare(report, ledger: ledger, apps: false) { sku, apple in product(sku, apple).map { (bundleId: "", productId: $0) } }
    }

    /// Compares a developer account's report with the ledger's apps: `app` maps a line to the
    /// app and product it is (by an app's catalog); a line it does not map is another app's
    /// (`otherApps`), listed apart.
    public static func compare(
        _ report: AppStoreReport, ledger: [LedgerReportLine],
        app: (_ sku: String, _ appleIdentifier: String) -> (bundleId: String, productId: String)?
    ) -> ReportReconciliation {
        compare(report, ledger: ledger, apps: true, product: app)
    }

    /// Compares `report` with the ledger's paid transactions and refunds.
    ///
    /// With `apps`, a line no app's catalog maps is another app's, kept apart; without, it is an
    /// unknown product, keyed by its SKU and compared (with nothing: a difference).
    /// A ledger line goes to the period of the report's lines that contains its day (for a daily
    /// sales report, that day; for a financial report, the fiscal month); a day inside the
    /// report's period but in no line's period goes to the report's period, so a sale Apple did
    /// not report at all still shows. Ledger lines dated outside the report's period are left
    /// out: the report says nothing about them.
    ///
    /// - Parameter product: the app and catalog product id of a report line's SKU and Apple
    ///   identifier, nil when none maps.
    private static func compare(
        _ report: AppStoreReport, ledger: [LedgerReportLine], apps: Bool,
        product: (_ sku: String, _ appleIdentifier: String) -> (bundleId: String, productId: String)?
    ) -> ReportReconciliation {
        var appleCells: [ReportCell] = []
        var appleLines: [AppStoreReportLine] = []
        var unknown: Set<String> = []
        var otherApps: [OtherAppLine] = []
        for line in report.lines where line.customerPriceMinor != 0 {
            let productId: String
            var bundleId = ""
            if let known = product(line.sku, line.appleIdentifier) {
                (bundleId, productId) = known
            } else {
                let name = line.sku.isEmpty ? "apple:\(line.appleIdentifier)" : line.sku
                unknown.insert(name)
                if apps {
                    otherApps.append(OtherAppLine(line))
                    continue
                }
                productId = "sku:\(name)"
            }
            var cell = ReportCell(
                periodStart: line.periodStart, periodEnd: line.periodEnd, productId: productId,
                country: ISO3166.alpha3(fromAlpha2: line.country) ?? line.country,
                currency: line.currency, unitPriceMinor: line.customerPriceMinor, isReturn: line.isReturn)
            cell.bundleId = bundleId
            appleCells.append(cell)
            appleLines.append(line)
        }

        let periods = ReportPeriods(report)
        var ledgerCells: [ReportCell] = []
        var ledgerLines: [LedgerReportLine] = []
        for line in ledger where line.unitPriceMinor != 0 {
            guard let period = periods.period(containing: line.day) else { continue }
            var cell = ReportCell(
                periodStart: period.start, periodEnd: period.end, productId: line.productId, country: line.country,
                currency: line.currency.uppercased(), unitPriceMinor: line.unitPriceMinor, isReturn: line.isRefund)
            cell.bundleId = apps ? line.bundleId : ""
            ledgerCells.append(cell)
            ledgerLines.append(line)
        }

        // Where the ledger does not know a line's country, its cell's other keys sum every country.
        let unplaced = Set(zip(ledgerCells, ledgerLines).compactMap { cell, line in
            line.country == Storefront.unknown ? Self.withoutCountry(cell) : nil
        })
        func key(_ cell: ReportCell) -> ReportCell {
            let summed = Self.withoutCountry(cell)
            return unplaced.contains(summed) ? summed : cell
        }

        var apple: [ReportCell: AppleTally] = [:]
        for (cell, line) in zip(appleCells, appleLines) { apple[key(cell), default: AppleTally()].add(line) }
        var ledgerSide: [ReportCell: LedgerTally] = [:]
        for (cell, line) in zip(ledgerCells, ledgerLines) { ledgerSide[key(cell), default: LedgerTally()].add(line) }

        let cells = Set(apple.keys).union(ledgerSide.keys).sorted().map { cell in
            let a = apple[cell] ?? AppleTally()
            let l = ledgerSide[cell] ?? LedgerTally()
            // Apple's proceeds currency decides; a cell Apple has no row in is the ledger's.
            let currency = a.currencies.count == 1 ? a.currencies.first ?? cell.currency : cell.currency
            let comparable = a.currencies.count <= 1 && currency == cell.currency
            return ReportCellComparison(
                cell: cell, appleUnits: a.units, ledgerUnits: l.units,
                appleProceedsMinor: comparable && a.proceedsComplete ? a.proceeds : nil,
                ledgerProceedsMinor: comparable ? l.proceeds : nil, proceedsCurrency: currency,
                ledgerProceedsEstimated: l.estimated, appleCountries: a.countries.sorted(), ledgerTransactions: l.transactions.sorted())
        }
        return ReportReconciliation(
            kind: report.kind, periodStart: report.periodStart, periodEnd: report.periodEnd, cells: cells, unknownProducts: unknown.sorted(),
            otherApps: otherApps)
    }

    private static func withoutCountry(_ cell: ReportCell) -> ReportCell {
        var summed = cell
        summed.country = ""
        return summed
    }
}

/// Apple's side of one cell: units and proceeds as magnitudes, the countries its rows name.
private struct AppleTally {
    var units: Int64 = 0
    var proceeds: Int64 = 0
    /// False once a row gave no proceeds: the cell's money is then unknown, not short.
    var proceedsComplete = true
    var currencies: Set<String> = []
    var countries: Set<String> = []

    mutating func add(_ line: AppStoreReportLine) {
        let units = Int64(clamping: line.units.magnitude)
        self.units = saturatingAdd(self.units, units)
        if let perUnit = line.proceedsMinor {
            let (product, overflow) = perUnit.multipliedReportingOverflow(by: units)
            proceeds = saturatingAdd(proceeds, overflow ? .max : product)
            currencies.insert(line.proceedsCurrency ?? line.currency)
        } else {
            proceedsComplete = false
        }
        if !line.country.isEmpty { countries.insert(line.country) }
    }
}

/// The ledger's side of one cell.
private struct LedgerTally {
    var units: Int64 = 0
    var proceeds: Int64 = 0
    var estimated = false
    var transactions: Set<String> = []

    mutating func add(_ line: LedgerReportLine) {
        units = saturatingAdd(units, Int64(clamping: line.units.magnitude))
        proceeds = saturatingAdd(proceeds, Int64(clamping: line.proceedsMinor.magnitude))
        estimated = estimated || line.proceedsEstimated
        transactions.insert(line.transactionId)
    }
}

/// A sum past `Int64.max` is no closer to matching: it stays at the maximum.
private func saturatingAdd(_ a: Int64, _ b: Int64) -> Int64 {
    let (sum, overflow) = a.addingReportingOverflow(b)
    return overflow ? .max : sum
}

/// The periods a report's lines cover, to file ledger lines under by day.
private struct ReportPeriods {
    var linePeriods: [(start: String, end: String)]
    var report: (start: String, end: String)

    init(_ report: AppStoreReport) {
        var seen = Set<String>()
        var periods: [(start: String, end: String)] = []
        for line in report.lines {
            if seen.insert("\(line.periodStart)/\(line.periodEnd)").inserted { periods.append((line.periodStart, line.periodEnd)) }
        }
        // Sorted, so that a day in two overlapping periods always goes to the same one.
        self.linePeriods = periods.sorted { ($0.start, $0.end) < ($1.start, $1.end) }
        self.report = (report.periodStart, report.periodEnd)
    }

    /// `YYYY-MM-DD` strings order as the days do, so days compare as text.
    func period(containing day: String) -> (start: String, end: String)? {
        if let period = linePeriods.first(where: { $0.start <= day && day <= $0.end }) { return period }
        guard !report.start.isEmpty, report.start <= day, day <= report.end else { return nil }
        return report
    }
}
