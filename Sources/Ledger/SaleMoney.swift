/// How a revenue line's money divides into tax, commission and proceeds (docs/configuration.md "Money"):
/// the rule, in integers, that the revenue report's SQL (`RevenueLineMoney` in LedgerQueries)
/// computes per line and that tests check it against.
///
/// Apple's price points state `proceeds` at the standard 30% commission and `proceedsYear2` at
/// 15% (App Store Connect API, "List all price points for a subscription": US 0.29 pays 0.21 and
/// 0.25 in year two). A plan's rate picks the figure stated at that rate where the point has
/// one; otherwise the figure at 30% is scaled by (1 − plan rate) ÷ (1 − 30%). The tax Apple kept
/// before its commission is what the customer paid beyond that figure grossed up at its rate.
public struct SaleMoney: Sendable, Hashable {
    public var taxMinor: Int64
    public var commissionMinor: Int64
    public var proceedsMinor: Int64
    /// True when no price point priced the sale, so the commission plan estimated it.
    public var estimated: Bool

    public init(taxMinor: Int64, commissionMinor: Int64, proceedsMinor: Int64, estimated: Bool) {
        self.taxMinor = taxMinor
        self.commissionMinor = commissionMinor
        self.proceedsMinor = proceedsMinor
        self.estimated = estimated
    }

    /// The rate, in percent, at which price points state `proceeds`.
    public static let pointPercent: Int64 = 30
    /// The rate at which they state `proceedsYear2`.
    public static let pointYear2Percent: Int64 = 15

    /// A sale of `grossMinor` (all units, tax included) at `planPercent` (the plan's rate for
    /// this sale, `CommissionPlan.percent(reducedRate:)`), priced by a point's proceeds per unit
    /// (nil: no point matched) times `quantity`.
    public static func sale(
        grossMinor: Int64, quantity: Int64, planPercent: Int64, pointProceedsMinor: Int64?, pointYear2ProceedsMinor: Int64?
    ) -> SaleMoney {
        guard let pointProceedsMinor else {
            let commission = (grossMinor * planPercent + 50) / 100
            return SaleMoney(taxMinor: 0, commissionMinor: commission, proceedsMinor: grossMinor - commission, estimated: true)
        }
        let useYear2 = pointYear2ProceedsMinor != nil && planPercent == pointYear2Percent
        let figure = (useYear2 ? pointYear2ProceedsMinor ?? 0 : pointProceedsMinor) * max(quantity, 1)
        let assumed = useYear2 ? pointYear2Percent : pointPercent
        let proceeds = halfUp(figure * (100 - planPercent), 100 - assumed)
        let tax = max(0, grossMinor - halfUp(figure * 100, 100 - assumed))
        return SaleMoney(taxMinor: tax, commissionMinor: grossMinor - tax - proceeds, proceedsMinor: proceeds, estimated: false)
    }

    /// A refund (negative) or reversal (positive) line of `fractionMilli` of a sale whose money
    /// is `sale`: the proceeds and the tax in that proportion, rounded half up, the commission
    /// the rest of the line's gross, so `gross = tax + commission + proceeds` on every line. A
    /// line whose share rounds to no money moves none of them.
    public func share(lineGrossMinor: Int64, fractionMilli: Int64) -> SaleMoney {
        let sign = lineGrossMinor.signum()
        let proceeds = sign * RefundFraction.money(proceedsMinor, fractionMilli)
        let tax = sign * RefundFraction.money(taxMinor, fractionMilli)
        return SaleMoney(taxMinor: tax, commissionMinor: lineGrossMinor - tax - proceeds, proceedsMinor: proceeds, estimated: estimated)
    }

    /// round-half-up(numerator ÷ denominator) for a non-negative numerator.
    static func halfUp(_ numerator: Int64, _ denominator: Int64) -> Int64 {
        (numerator * 2 + denominator) / (denominator * 2)
    }
}
