import Foundation

extension PricePoints {
    /// Subscribers' second year: an auto-renewable period bought at least this long after its
    /// subscription's original purchase pays the 15 % commission (`proceedsYear2`).
    static let year2AfterMs: Int64 = 365 * SimulatorState.dayMs

    /// The developer's proceeds for one unit of `sale`, at `unitPrice` (minor units of the
    /// sale's currency), as App Store Connect's reports pay them: the rule of the price points
    /// the simulator serves (`proceeds(customerPrice:...)`), with the tax rate of the sale's
    /// territory in force at its purchase date (`taxRate(of:at:changes:)`, so a sale before a
    /// tax change keeps the old rate's proceeds) and 30 % commission, 15 % for an auto-renewable
    /// period bought at least 365 days after its subscription's original purchase date.
    ///
    /// The year counts from the original purchase, free trial included, and the simulator does
    /// not model lapses (Apple restarts the count after more than 60 days without a paid
    /// period). A sale outside the six territories, or in a currency that is not its
    /// territory's (a product priced where `PriceTerritory.equivalentPrice` has no tier),
    /// matches no price point of the simulator and keeps 70 % of the price
    /// (`ReportFormat.proceeds(ofMinor:)`).
    static func proceeds(
        of sale: SimulatedTransaction, unitPrice: Int64, taxChanges: [TaxChange]
    ) -> Int64 {
        guard let territory = PriceTerritory.of(storefront: sale.storefront), territory.currency == sale.currency else {
            return ReportFormat.proceeds(ofMinor: unitPrice)
        }
        let purchased = Date(timeIntervalSince1970: Double(sale.purchaseDateMs) / 1000)
        let inYear2 =
            sale.kind == .autoRenewable && sale.purchaseDateMs - sale.originalPurchaseDateMs >= year2AfterMs
        return proceeds(
            customerPrice: unitPrice, minorUnitDigits: territory.minorUnitDigits,
            taxRatePercent: taxRate(of: territory, at: purchased, changes: taxChanges),
            commissionPercent: inYear2 ? year2CommissionPercent : commissionPercent)
    }
}
