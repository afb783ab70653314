import Ledger
import LedgerStore

/// What the reports of finance over time (`/v1/reports/subscriptions`, `cohorts`, `refunds`
/// and `purchase-ledger report`) are asked for: a range of days cut into periods, one
/// environment, and optionally one app and one product.
public struct HistoryQuery: Sendable, Hashable {
    /// First and last day (UTC, inclusive), `YYYY-MM-DD`.
    public var from: String
    public var to: String
    public var interval: ReportPeriod.Interval
    public var environment: String
    public var bundleId: String?
    /// One product's figures: a subscription counts for it while it has that product, so a
    /// move to another product leaves this one's figures as churn and joins the other's as new
    /// or reactivated.
    public var productId: String?
    /// Prices net of tax where a price point says what the tax is (`RevenueLineMoney`).
    public var commission: CommissionPlan

    /// Checks the dates, the environment and the number of periods; the message names what is wrong.
    public init(
        from: String, to: String, interval: ReportPeriod.Interval = .month, environment: String = "Production", bundleId: String? = nil,
        productId: String? = nil, commission: CommissionPlan = .standard
    ) throws(LedgerServiceError) {
        // The same checks as the revenue report's, so both refuse the same ranges in the same words.
        let range = try RevenueQuery(from: from, to: to, environment: environment)
        if let productId, productId.isEmpty || productId.utf8.count > 200 {
            throw LedgerServiceError(.invalidRequest, "product_id must be 1 to 200 bytes")
        }
        self.from = range.from
        self.to = range.to
        self.interval = interval
        self.environment = range.environment
        self.bundleId = bundleId
        self.productId = productId
        self.commission = commission
        periods = ReportPeriod.covering(from: from, to: to, by: interval)
        guard periods.count < ReportPeriod.limit else {
            throw LedgerServiceError(.invalidRequest, "from \(from) to \(to) by \(interval.rawValue) is more than \(ReportPeriod.limit - 1) periods")
        }
    }

    /// The periods `from` … `to` are cut into, by `interval`.
    public let periods: [ReportPeriod]

    /// A download's name: `REPORT-ENVIRONMENT-FROM-TO-by-INTERVAL.csv`, the same from the API,
    /// the console and their tests.
    public func fileName(_ report: String) -> String {
        "\(report)-\(environment)-\(from)-\(to)-by-\(interval.rawValue).csv"
    }
    /// The months a cohort report runs over, whatever `interval` says.
    public var months: [ReportPeriod] { ReportPeriod.covering(from: from, to: to, by: .month) }
}
