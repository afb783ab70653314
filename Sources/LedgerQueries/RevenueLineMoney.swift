import Ledger
import Postgres

/// `SaleMoney`'s rule as SQL over a row of `projection_revenue_lines` (unaliased columns), so a
/// report sums tax and proceeds in the database instead of bringing every line to Swift. Tests
/// compare the two on the same inputs (`SaleMoneySQLTests`).
enum RevenueLineMoney {
    /// The line's tax, signed like its gross.
    static func tax(_ plan: CommissionPlan) -> SQL {
        "(CASE WHEN point_proceeds_minor IS NULL THEN 0 ELSE sign(gross_minor)::bigint * \(fragment: share(saleTax(plan))) END)"
    }

    /// The line's proceeds, signed like its gross.
    static func proceeds(_ plan: CommissionPlan) -> SQL {
        """
        (sign(gross_minor)::bigint * \(fragment: share(
            "(CASE WHEN point_proceeds_minor IS NULL THEN \(fragment: sale) - (\(fragment: sale) * \(fragment: rate(plan)) + 50) / 100 ELSE \(fragment: saleProceeds(plan)) END)")))
        """
    }

    /// True when no price point prices the line.
    static let estimated: SQL = "(point_proceeds_minor IS NULL)"

    /// The customer price of the whole sale the line belongs to.
    private static let sale: SQL = "coalesce(sale_gross_minor, abs(gross_minor))"

    /// The plan's rate on this line, in percent.
    private static func rate(_ plan: CommissionPlan) -> SQL {
        "(CASE WHEN reduced_rate THEN \(plan.percent(reducedRate: true)) ELSE \(plan.percent(reducedRate: false)) END)::bigint"
    }

    private static func useYear2(_ plan: CommissionPlan) -> SQL {
        "(point_proceeds_year2_minor IS NOT NULL AND \(fragment: rate(plan)) = \(SaleMoney.pointYear2Percent))"
    }

    /// The point's figure for the whole sale (per unit times the quantity).
    private static func figure(_ plan: CommissionPlan) -> SQL {
        "((CASE WHEN \(fragment: useYear2(plan)) THEN point_proceeds_year2_minor ELSE point_proceeds_minor END) * greatest(quantity, 1))"
    }

    /// 100 − the rate the figure is stated at.
    private static func kept(_ plan: CommissionPlan) -> SQL {
        "(CASE WHEN \(fragment: useYear2(plan)) THEN \(100 - SaleMoney.pointYear2Percent) ELSE \(100 - SaleMoney.pointPercent) END)::bigint"
    }

    private static func saleProceeds(_ plan: CommissionPlan) -> SQL {
        halfUp("\(fragment: figure(plan)) * (100 - \(fragment: rate(plan)))", kept(plan))
    }

    private static func saleTax(_ plan: CommissionPlan) -> SQL {
        "greatest(0::bigint, \(fragment: sale) - \(fragment: halfUp("\(fragment: figure(plan)) * 100", kept(plan))))"
    }

    private static func halfUp(_ numerator: SQL, _ denominator: SQL) -> SQL {
        "((\(fragment: numerator)) * 2 + \(fragment: denominator)) / (\(fragment: denominator) * 2)"
    }

    /// The line's share (`fraction_milli`) of a sale amount, rounded half up; all of it on a sale.
    private static func share(_ amount: SQL) -> SQL {
        "((\(fragment: amount)) * fraction_milli + \(RefundFraction.whole / 2)::bigint) / \(RefundFraction.whole)::bigint"
    }
}
