import Ledger

/// The reports of finance over time as CSV (RFC 4180, text cells guarded against formulas as
/// the revenue report's are): one implementation for `format=csv`, `purchase-ledger report
/// --format csv` and the console's downloads. Money is written in major units of its currency
/// from the integers, never through floating point. A period with figures in several currencies
/// has a row per currency, its counts repeated on each; a period with none has one row whose
/// currency is empty.
public enum HistoryCSV {
    public static let subscriptionColumns = [
        "period", "active", "in_trial", "in_grace_period", "in_billing_retry", "new", "churned", "reactivated", "trials_started",
        "trials_converted", "currency", "mrr", "new_mrr", "expansion_mrr", "contraction_mrr", "churn_mrr", "reactivation_mrr",
    ]

    public static func subscriptions(_ report: SubscriptionMetrics) -> String {
        csv(subscriptionColumns, subscriptionRows(report), text: [0, 10])
    }

    /// The rows under `subscriptionColumns`, as plain cells (the table prints them as they are).
    public static func subscriptionRows(_ report: SubscriptionMetrics) -> [[String]] {
        var lines: [[String]] = []
        for point in report.points {
            let counts = [
                point.active, point.inTrial, point.inGracePeriod, point.inBillingRetry, point.new, point.churned, point.reactivated,
                point.trialsStarted, point.trialsConverted,
            ].map(String.init)
            let currencies = Set(point.mrr.map(\.currency)).union(point.movement.map(\.currency)).sorted()
            if currencies.isEmpty { lines.append([point.period] + counts + ["", "", "", "", "", "", ""]) }
            for currency in currencies {
                func money(_ minor: Int64?) -> String { Money(minorUnits: minor ?? 0, currency: currency).decimal }
                let mrr = point.mrr.first { $0.currency == currency }?.mrrMinor
                let move = point.movement.first { $0.currency == currency } ?? SubscriptionMetrics.Movement(currency: currency)
                let amounts = [mrr, move.newMinor, move.expansionMinor, move.contractionMinor, move.churnMinor, move.reactivationMinor].map(money)
                lines.append([point.period] + counts + [currency] + amounts)
            }
        }
        return lines
    }

    public static let cohortColumns = ["cohort", "currency", "customers", "month", "months_since", "retained", "revenue"]

    /// One row per cohort and month since it began.
    public static func cohorts(_ report: CohortMetrics, months: [ReportPeriod]) -> String {
        csv(cohortColumns, cohortRows(report, months: months), text: [0, 1, 3])
    }

    public static func cohortRows(_ report: CohortMetrics, months: [ReportPeriod]) -> [[String]] {
        var lines: [[String]] = []
        for cohort in report.cohorts {
            guard let first = months.firstIndex(where: { $0.label == cohort.cohort }) else { continue }
            for (offset, retained) in cohort.retained.enumerated() where first + offset < months.count {
                lines.append([
                    cohort.cohort, cohort.currency, String(cohort.customers), months[first + offset].label, String(offset),
                    String(retained), Money(minorUnits: cohort.revenueMinor[offset], currency: cohort.currency).decimal,
                ])
            }
        }
        return lines
    }

    public static let refundColumns = ["period", "sales", "refunds", "refund_rate", "currency", "refunded"]

    public static func refunds(_ report: RefundMetrics) -> String {
        csv(refundColumns, refundRows(report), text: [0, 4])
    }

    public static func refundRows(_ report: RefundMetrics) -> [[String]] {
        var lines: [[String]] = []
        for point in report.points {
            let counts = [String(point.sales), String(point.refunds), "\(point.refundRate)"]
            if point.refunded.isEmpty { lines.append([point.period] + counts + ["", ""]) }
            for refunded in point.refunded {
                lines.append([point.period] + counts + [
                    refunded.currency, Money(minorUnits: refunded.amountMinor, currency: refunded.currency).decimal,
                ])
            }
        }
        return lines
    }

    /// `text`: the columns holding text (guarded against formulas); the rest are numbers.
    private static func csv(_ columns: [String], _ rows: [[String]], text: Set<Int>) -> String {
        let lines = [columns.map(RevenueReport.textField)] + rows.map { row in
            row.enumerated().map { text.contains($0.offset) ? RevenueReport.textField($0.element) : RevenueReport.field($0.element) }
        }
        return lines.map { $0.joined(separator: ",") }.joined(separator: "\r\n") + "\r\n"
    }
}
