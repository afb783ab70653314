/// Where one period of a subscription billed monthly against a commitment stands in it, as the
/// simulator signs it (`billingPlanType` `MONTHLY` and `commitmentInfo`, App Store Server API
/// 1.21): a product with `commitmentPeriods` 12 bills its price each month, twelve times, for a
/// commitment costing twelve times that price; the thirteenth period starts a new commitment, as
/// long as auto-renew stays on.
///
/// Times are milliseconds since 1970 (UTC) on the simulated clock; prices milliunits.
/// https://developer.apple.com/documentation/appstoreserverapi/transactioncommitmentinfo
public struct SimulatedCommitment: Sendable, Codable, Hashable {
    /// The instalment this period pays: 1 … `totalBillingPeriods`.
    public var billingPeriodNumber: Int
    public var totalBillingPeriods: Int
    /// The whole commitment's price, in milliunits of the transaction's currency: its
    /// instalments' sum.
    public var commitmentPriceMilliunits: Int64
    /// When the commitment ends: the end of its last period.
    public var commitmentExpiresDateMs: Int64

    /// Apple's `billingPlanType` of a period billed against a commitment.
    public static let monthlyPlan = "MONTHLY"

    /// The commitment standing of the `period`-th paid period (1 for the first) of a run of
    /// `product`'s periods counted from `anchorMs`, billed in `storefront`; nil for a product
    /// billed up front, and for a free trial (period 0), which is no instalment. The commitment
    /// costs `total` instalments at the storefront's price (`PriceTerritory.equivalentPrice`),
    /// as each period is billed.
    static func of(
        _ product: SimulatedProduct, period: Int, anchorMs: Int64, storefront: String
    ) -> SimulatedCommitment? {
        guard let total = product.commitmentPeriods, total >= 1, period >= 1 else { return nil }
        let completed = (period - 1) / total
        let instalment = PriceTerritory.equivalentPrice(of: product, in: storefront)
        return SimulatedCommitment(
            billingPeriodNumber: (period - 1) % total + 1, totalBillingPeriods: total,
            commitmentPriceMilliunits: instalment.milliunits * Int64(total),
            commitmentExpiresDateMs: product.billingPeriod.end(after: (completed + 1) * total, from: anchorMs))
    }
}

extension SimulatedTransaction {
    /// Signs this period as billed against `product`'s commitment, if it has one: its plan and
    /// where it stands, priced in this transaction's storefront as its `price` is. A product
    /// billed up front leaves both nil (the simulator signs no `billingPlanType` for it, as
    /// Apple did before API 1.21).
    mutating func bill(_ product: SimulatedProduct, period: Int, anchorMs: Int64) {
        commitment = SimulatedCommitment.of(product, period: period, anchorMs: anchorMs, storefront: storefront)
        billingPlanType = commitment == nil ? nil : SimulatedCommitment.monthlyPlan
    }
}
