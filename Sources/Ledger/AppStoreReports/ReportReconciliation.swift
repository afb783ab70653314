/// An App Store Connect report compared with the ledger, cell by cell (`ReportCell`).
///
/// Both sides are counted in unit magnitudes: a sale cell counts units sold, a return cell units
/// returned, whatever sign either side writes them with. Sales and returns are separate cells,
/// so a refund never cancels a sale out of sight. Lines at a customer price of 0 (free trials,
/// offer-code redemptions) are left out on both sides: no money moved, and the ledger's revenue
/// has no line for them.
public struct ReportReconciliation: Sendable, Hashable, Codable {
    public var kind: AppStoreReport.Kind
    public var periodStart: String
    public var periodEnd: String
    /// Cells on either side.
    public var cellsCompared: Int
    /// Cells where both sides count the same units.
    public var cellsMatching: Int
    /// The other cells, sorted by cell.
    public var differences: [ReportDifference]
    /// SKUs of report lines that no catalog product maps to (the Apple identifier, prefixed
    /// "apple:", when the SKU is empty), sorted; their cells are keyed "sku:" + SKU.
    public var unknownProducts: [String]

    public init(
        kind: AppStoreReport.Kind, periodStart: String, periodEnd: String, cellsCompared: Int, cellsMatching: Int,
        differences: [ReportDifference], unknownProducts: [String]
    ) {
        self.kind = kind
        self.periodStart = periodStart
        self.periodEnd = periodEnd
        self.cellsCompared = cellsCompared
        self.cellsMatching = cellsMatching
        self.differences = differences
        self.unknownProducts = unknownProducts
    }

    /// Compares `report` with the ledger's paid transactions and refunds.
    ///
    /// A ledger line goes to the period of the report's lines that contains its day (for a daily
    /// sales report, that day; for a financial report, the fiscal month); a day inside the
    /// report's period but in no line's period goes to the report's period, so a sale Apple did
    /// not report at all still shows. Ledger lines dated outside the report's period are left
    /// out: the report says nothing about them.
    ///
    /// - Parameter product: the catalog's product id for a report line's SKU and Apple
    ///   identifier, nil when none maps.
    public static func compare(
        _ report: AppStoreReport, ledger: [LedgerReportLine],
        product: (_ sku: String, _ appleIdentifier: String) -> String?
    ) -> ReportReconciliation {
        var apple: [ReportCell: CellTally] = [:]
        var unknown: Set<String> = []
        for line in report.lines where line.customerPriceMinor != 0 {
            let productId: String
            if let known = product(line.sku, line.appleIdentifier) {
                productId = known
            } else {
                let name = line.sku.isEmpty ? "apple:\(line.appleIdentifier)" : line.sku
                unknown.insert(name)
                productId = "sku:\(name)"
            }
            let cell = ReportCell(
                periodStart: line.periodStart, periodEnd: line.periodEnd, productId: productId,
                currency: line.currency, unitPriceMinor: line.customerPriceMinor, isReturn: line.isReturn)
            apple[cell, default: CellTally()].add(line.units, label: line.country)
        }

        let periods = ReportPeriods(report)
        var ledgerSide: [ReportCell: CellTally] = [:]
        for line in ledger where line.unitPriceMinor != 0 {
            guard let period = periods.period(containing: line.day) else { continue }
            let cell = ReportCell(
                periodStart: period.start, periodEnd: period.end, productId: line.productId,
                currency: line.currency.uppercased(), unitPriceMinor: line.unitPriceMinor, isReturn: line.isRefund)
            ledgerSide[cell, default: CellTally()].add(line.units, label: line.transactionId)
        }

        let cells = Set(apple.keys).union(ledgerSide.keys).sorted()
        var differences: [ReportDifference] = []
        for cell in cells {
            let a = apple[cell] ?? CellTally()
            let l = ledgerSide[cell] ?? CellTally()
            guard a.units != l.units else { continue }
            differences.append(
                ReportDifference(
                    cell: cell, appleUnits: a.units, ledgerUnits: l.units,
                    appleCountries: a.labels.sorted(), ledgerTransactions: l.labels.sorted()))
        }
        return ReportReconciliation(
            kind: report.kind, periodStart: report.periodStart, periodEnd: report.periodEnd,
            cellsCompared: cells.count, cellsMatching: cells.count - differences.count,
            differences: differences, unknownProducts: unknown.sorted())
    }
}

/// One side of one cell: units as a magnitude, and what to show for them (countries on Apple's
/// side, transaction ids on the ledger's).
private struct CellTally {
    var units: Int64 = 0
    var labels: Set<String> = []

    /// Adds `units`' magnitude, saturating: a sum past `Int64.max` is no closer to matching.
    mutating func add(_ units: Int64, label: String) {
        let magnitude = Int64(clamping: units.magnitude)
        let (sum, overflow) = self.units.addingReportingOverflow(magnitude)
        self.units = overflow ? .max : sum
        if !label.isEmpty { labels.insert(label) }
    }
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
