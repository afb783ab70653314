import Foundation
import Ledger
import Testing

/// A subscription's states over time, and the finance figures read from them per period.
@Suite struct SubscriptionHistoryTests {
    typealias Interval = SubscriptionHistory.Interval

    /// 2026-01-01T00:00:00Z, a Thursday.
    static let t0: Int64 = 1_767_225_600_000
    static let day: Int64 = 86_400_000

    /// The instant `days` whole days after `t0`.
    static func at(_ days: Int64) -> Int64 { t0 + days * day }

    static func usd(_ minor: Int64) -> Money { Money(minorUnits: minor, currency: "USD") }

    /// A transaction covering `days` (offsets from `t0`).
    static func entry(
        _ id: String, _ days: Range<Int64>, product: String = "pro", cancelledAt: Int64? = nil,
        trial: Bool = false, upgraded: Bool = false
    ) -> SubscriptionEntry {
        SubscriptionEntry(
            transactionId: id, productId: product, purchaseDateMs: at(days.lowerBound), expiresDateMs: at(days.upperBound),
            cancellationDateMs: cancelledAt.map(at), isTrial: trial, isUpgraded: upgraded)
    }

    /// A renewal state Apple signed on day `atDay`.
    static func observation(_ atDay: Int64, retry: Bool, graceUntil: Int64? = nil) -> RenewalObservation {
        RenewalObservation(
            observedAtMs: at(atDay), autoRenew: true, autoRenewProductId: "pro", inBillingRetry: retry,
            gracePeriodExpiresMs: graceUntil.map(at))
    }

    /// An interval from day `from` to day `to` (nil: open), priced `monthly` USD minor units.
    static func interval(_ state: SubscriptionHistory.State, _ from: Int64, _ to: Int64?, product: String = "pro", monthly: Int64? = nil) -> Interval {
        Interval(state: state, startMs: at(from), endMs: to.map(at), productId: product, monthly: monthly.map(usd))
    }

    /// The intervals, every paid transaction priced from `prices` by id (499 when not listed).
    static func history(_ entries: [SubscriptionEntry], _ observations: [RenewalObservation] = [], prices: [String: Int64] = [:]) -> [Interval] {
        SubscriptionHistory.intervals(entries: entries, observations: observations) { usd(prices[$0.transactionId] ?? 499) }
    }

    // MARK: - Report periods

    @Test func daysAreWholeUTCDaysLabelledByDate() {
        // Rule: by day, one period per UTC day from `from` through `to`, [00:00, next 00:00).
        let periods = ReportPeriod.covering(from: "2026-01-01", to: "2026-01-03", by: .day)
        #expect(periods.map(\.label) == ["2026-01-01", "2026-01-02", "2026-01-03"])
        #expect(periods.map(\.startMs) == [Self.at(0), Self.at(1), Self.at(2)])
        #expect(periods.map(\.endMs) == [Self.at(1), Self.at(2), Self.at(3)])
        #expect(periods.first?.lastMs == Self.at(1) - 1)
    }

    @Test func weeksStartOnTheMondayHoldingTheFirstDay() {
        // Rule: by week, ISO weeks reported whole; 2026-01-01 is a Thursday, its week starts 2025-12-29.
        let periods = ReportPeriod.covering(from: "2026-01-01", to: "2026-01-14", by: .week)
        #expect(periods.map(\.label) == ["2025-12-29", "2026-01-05", "2026-01-12"])
        #expect(periods.first?.startMs == Self.at(-3))
        #expect(periods.allSatisfy { $0.endMs - $0.startMs == 7 * Self.day })
        #expect(zip(periods, periods.dropFirst()).allSatisfy { $0.endMs == $1.startMs })
    }

    @Test func monthsAreCalendarMonths() {
        // Rule: by month, whole calendar months, each as long as it is (February 2026: 28 days).
        let periods = ReportPeriod.covering(from: "2026-01-15", to: "2026-02-10", by: .month)
        #expect(periods.map(\.label) == ["2026-01", "2026-02"])
        #expect(periods.map(\.startMs) == [Self.at(0), Self.at(31)])
        #expect(periods.map(\.endMs) == [Self.at(31), Self.at(59)])
    }

    @Test func aRangeInsideOneMonthIsThatWholeMonth() {
        // Rule: a month is reported whole even when the range falls inside it.
        let periods = ReportPeriod.covering(from: "2026-03-05", to: "2026-03-20", by: .month)
        #expect(periods == [ReportPeriod(label: "2026-03", startMs: Self.at(59), endMs: Self.at(90))])
    }

    // MARK: - Intervals

    @Test func aTrialThenPaidPeriodsThenExpiry() {
        // Rule: a trial and paid periods back to back, then an open `expired` tail; the paid
        // periods carry the monthly price, the trial none (even though `monthly` would give one).
        let entries = [
            Self.entry("t", 0..<7, trial: true),
            Self.entry("p1", 7..<37),
            Self.entry("p2", 37..<67),
        ]
        #expect(Self.history(entries) == [
            Self.interval(.trial, 0, 7),
            Self.interval(.active, 7, 37, monthly: 499),
            Self.interval(.active, 37, 67, monthly: 499),
            Self.interval(.expired, 67, nil),
        ])
    }

    @Test func aGracePeriodThenBillingRetryThatRecovers() {
        // Rule: a failed renewal at E with a grace period to E+16d is grace (at the price last
        // paid) until then, billing retry until the next paid period starts at E+20d.
        let entries = [Self.entry("p1", 0..<31), Self.entry("p2", 51..<82)]
        let observations = [Self.observation(31, retry: true, graceUntil: 47)]
        #expect(Self.history(entries, observations, prices: ["p1": 499, "p2": 599]) == [
            Self.interval(.active, 0, 31, monthly: 499),
            Self.interval(.gracePeriod, 31, 47, monthly: 499),
            Self.interval(.billingRetry, 47, 51),
            Self.interval(.active, 51, 82, monthly: 599),
            Self.interval(.expired, 82, nil),
        ])
    }

    @Test func aBillingRetryThatFailsExpiresWhenAppleStops() {
        // Rule: billing retry (no grace period) from E until Apple says it stopped retrying at
        // E+60d, expired from then on.
        let entries = [Self.entry("p1", 0..<31)]
        let observations = [Self.observation(31, retry: true), Self.observation(91, retry: false)]
        #expect(Self.history(entries, observations) == [
            Self.interval(.active, 0, 31, monthly: 499),
            Self.interval(.billingRetry, 31, 91),
            Self.interval(.expired, 91, nil),
        ])
    }

    @Test func aRefundEndsAccessAtTheCancellation() {
        // Rule: a period refunded on day 10 of 0–31 is paid until day 10, then revoked for good.
        let entries = [Self.entry("p1", 0..<31, cancelledAt: 10)]
        #expect(Self.history(entries) == [
            Self.interval(.active, 0, 10, monthly: 499),
            Self.interval(.revoked, 10, nil),
        ])
    }

    @Test func anUpgradedTransactionGivesItsTimeToTheNewPlan() {
        // Rule: the upgraded transaction counts until the upgrade (its cancellation is no
        // refund: nothing is revoked, there is no gap); the new plan's covers from its own start.
        let entries = [
            Self.entry("old", 0..<31, product: "pro", cancelledAt: 10, upgraded: true),
            Self.entry("new", 10..<41, product: "pro_plus"),
        ]
        let expected = [
            Self.interval(.active, 0, 10, product: "pro", monthly: 499),
            Self.interval(.active, 10, 41, product: "pro_plus", monthly: 999),
            Self.interval(.expired, 41, nil, product: "pro_plus"),
        ]
        #expect(Self.history(entries, prices: ["old": 499, "new": 999]) == expected)
        // Apple's receipt may name the upgrade without a cancellation date: the old period still
        // ends where the new one begins.
        let undated = [Self.entry("old", 0..<31, product: "pro", upgraded: true), Self.entry("new", 10..<41, product: "pro_plus")]
        #expect(Self.history(undated, prices: ["old": 499, "new": 999]) == expected)
        // Before anything shows the old one upgraded (Apple's notification of the upgrade names
        // only the new transaction), the new plan still takes over at its start.
        let unmarked = [Self.entry("old", 0..<31, product: "pro"), Self.entry("new", 10..<41, product: "pro_plus")]
        #expect(Self.history(unmarked, prices: ["old": 499, "new": 999]) == expected)
    }

    @Test func aTrialWhoseFirstChargeFailsIsNotChurn() {
        // Rule: a trial, then the grace period of its failed first charge, then expiry: an
        // unconverted trial. No churn, no MRR (no price was ever paid), no conversion.
        let entries = [Self.entry("t", 0..<7, trial: true)]
        let observations = [Self.observation(7, retry: true, graceUntil: 10), Self.observation(30, retry: false)]
        let intervals = SubscriptionHistory.intervals(entries: entries, observations: observations) { _ in Money(minorUnits: 499, currency: "USD") }
        #expect(intervals.map(\.state) == [.trial, .gracePeriod, .billingRetry, .expired])
        let life = SubscriptionLife(originalTransactionId: "o", userId: "u", intervals: intervals)
        #expect(life.paidAccessEndsMs.isEmpty)
        #expect(life.conversionMs == nil && life.firstPaidMs == nil)
        #expect(life.mrr(at: Self.at(8)) == nil)
    }

    @Test func theIntervalsDoNotDependOnTheOrderGiven() {
        // Rule: the intervals are a function of the sets of entries and observations.
        let entries = [
            Self.entry("t", 0..<7, trial: true),
            Self.entry("p1", 7..<38),
            Self.entry("p2", 58..<89),
        ]
        let observations = [
            Self.observation(20, retry: false),
            Self.observation(38, retry: true, graceUntil: 54),
            Self.observation(89, retry: true),
            Self.observation(100, retry: false),
        ]
        let prices: [String: Int64] = ["p1": 499, "p2": 599]
        let expected = [
            Self.interval(.trial, 0, 7),
            Self.interval(.active, 7, 38, monthly: 499),
            Self.interval(.gracePeriod, 38, 54, monthly: 499),
            Self.interval(.billingRetry, 54, 58),
            Self.interval(.active, 58, 89, monthly: 599),
            Self.interval(.billingRetry, 89, 100),
            Self.interval(.expired, 100, nil),
        ]
        #expect(Self.history(entries, observations, prices: prices) == expected)
        #expect(Self.history(entries.reversed(), observations.reversed(), prices: prices) == expected)
        for seed in UInt64(1)...20 {
            var generator = SplitMix64(seed: seed)
            let shuffledEntries = entries.shuffled(using: &generator)
            let shuffledObservations = observations.shuffled(using: &generator)
            #expect(Self.history(shuffledEntries, shuffledObservations, prices: prices) == expected, "seed \(seed)")
        }
    }

    // MARK: - Subscription metrics

    /// January to April 2026. Day offsets: Feb 1 = 31, Mar 1 = 59, Apr 1 = 90, May 1 = 120.
    static let months = ReportPeriod.covering(from: "2026-01-01", to: "2026-04-30", by: .month)

    /// "a": trial from Jan 20, converts Feb 1 at 499. "b": paid from Jan 1 at 999, churns Mar 15.
    /// "c": paid from Jan 6 at 499, churns Feb 10, back on Apr 5 at 599.
    static let lives = [
        SubscriptionLife(originalTransactionId: "a", userId: "u1", intervals: [
            interval(.trial, 19, 31),
            interval(.active, 31, 134, monthly: 499),
            interval(.expired, 134, nil),
        ]),
        SubscriptionLife(originalTransactionId: "b", userId: "u2", intervals: [
            interval(.active, 0, 73, monthly: 999),
            interval(.expired, 73, nil),
        ]),
        SubscriptionLife(originalTransactionId: "c", userId: "u3", intervals: [
            interval(.active, 5, 40, monthly: 499),
            interval(.expired, 40, 94),
            interval(.active, 94, 124, monthly: 599),
            interval(.expired, 124, nil),
        ]),
    ]

    @Test func activeAndMRRAreTheStateAtEachPeriodsEnd() {
        // Rule: `active` counts access at the period's last instant (a trial included); MRR sums
        // the paid ones (a trial is not paid).
        let metrics = SubscriptionMetrics(lives: Self.lives, periods: Self.months)
        #expect(metrics.points.map(\.period) == ["2026-01", "2026-02", "2026-03", "2026-04"])
        #expect(metrics.points.map(\.active) == [3, 2, 1, 2])
        #expect(metrics.points.map(\.inTrial) == [1, 0, 0, 0])
        #expect(metrics.points.map { $0.mrr.map(\.currency) } == [["USD"], ["USD"], ["USD"], ["USD"]])
        #expect(metrics.points.map { $0.mrr.map(\.mrrMinor) } == [[1498], [1498], [499], [1098]])
        #expect(SubscriptionMetrics.originals(of: .active, in: "2026-03", periods: Self.months, lives: Self.lives) == ["a"])
        #expect(SubscriptionMetrics.originals(of: .mrr, in: "2026-01", periods: Self.months, lives: Self.lives) == ["b", "c"])
    }

    @Test func aConvertedTrialIsNewAtItsConversion() {
        // Rule: trials_started in the trial's month; new and trials_converted where the first paid
        // period began, with its monthly price as new movement.
        let metrics = SubscriptionMetrics(lives: Self.lives, periods: Self.months)
        #expect(SubscriptionMetrics.originals(of: .trialsStarted, in: "2026-01", periods: Self.months, lives: Self.lives) == ["a"])
        #expect(SubscriptionMetrics.originals(of: .new, in: "2026-01", periods: Self.months, lives: Self.lives) == ["b", "c"])
        #expect(SubscriptionMetrics.originals(of: .new, in: "2026-02", periods: Self.months, lives: Self.lives) == ["a"])
        #expect(SubscriptionMetrics.originals(of: .trialsConverted, in: "2026-02", periods: Self.months, lives: Self.lives) == ["a"])
        #expect(SubscriptionMetrics.originals(of: .trialsConverted, in: "2026-01", periods: Self.months, lives: Self.lives) == [])
        #expect(metrics.points.map(\.new) == [2, 1, 0, 0])
        #expect(metrics.points[1].movement.first?.newMinor == 499)
        #expect(SubscriptionMetrics.originals(of: .movementNew, in: "2026-02", periods: Self.months, lives: Self.lives) == ["a"])
    }

    @Test func churnAndReactivationFollowPaidAccess() {
        // Rule: churned where paid access ended and had not resumed by the period's end;
        // reactivated where access returns after a churn, its MRR counted as reactivation.
        let metrics = SubscriptionMetrics(lives: Self.lives, periods: Self.months)
        #expect(SubscriptionMetrics.originals(of: .churned, in: "2026-02", periods: Self.months, lives: Self.lives) == ["c"])
        #expect(SubscriptionMetrics.originals(of: .churned, in: "2026-03", periods: Self.months, lives: Self.lives) == ["b"])
        #expect(metrics.points.map(\.churned) == [0, 1, 1, 0])
        #expect(metrics.points[2].movement.first?.churnMinor == 999)
        #expect(SubscriptionMetrics.originals(of: .reactivated, in: "2026-04", periods: Self.months, lives: Self.lives) == ["c"])
        #expect(metrics.points.map(\.reactivated) == [0, 0, 0, 1])
        #expect(metrics.points[3].movement.first?.reactivationMinor == 599)
        #expect(SubscriptionMetrics.originals(of: .movementReactivation, in: "2026-04", periods: Self.months, lives: Self.lives) == ["c"])
        #expect(SubscriptionMetrics.originals(of: .churned, in: "2026-05", periods: Self.months, lives: Self.lives) == nil)
    }

    @Test func movementExplainsEachChangeInMRR() {
        // Rule: per period and currency, end MRR − start MRR = new + expansion + reactivation −
        // contraction − churn (start MRR: the previous period's end; 0 before the first).
        let metrics = SubscriptionMetrics(lives: Self.lives, periods: Self.months)
        var previous: [String: Int64] = [:]
        for point in metrics.points {
            let end = Dictionary(uniqueKeysWithValues: point.mrr.map { ($0.currency, $0.mrrMinor) })
            let moves = Dictionary(uniqueKeysWithValues: point.movement.map { ($0.currency, $0) })
            for currency in Set(previous.keys).union(end.keys).union(moves.keys) {
                let m = moves[currency] ?? SubscriptionMetrics.Movement(currency: currency)
                let explained = m.newMinor + m.expansionMinor + m.reactivationMinor - m.contractionMinor - m.churnMinor
                #expect((end[currency] ?? 0) - (previous[currency] ?? 0) == explained, "\(point.period) \(currency)")
            }
            previous = end
        }
        // And the movement is not trivially zero: January's is all new.
        #expect(metrics.points[0].movement.first?.newMinor == 1498)
    }

    // MARK: - Refunds

    @Test func refundRateIsRefundsOverSalesByCount() throws {
        // Rule: sales count paid sale lines (a free trial's 0 sale is not one), refunds count
        // refund lines, the rate is refunds ÷ sales to 4 decimals, 0 without sales.
        let periods = ReportPeriod.covering(from: "2026-01-01", to: "2026-01-02", by: .day)
        let lines = [
            RevenueLineFact(kind: .sale, originalTransactionId: "a", dayMs: Self.at(0), money: Self.usd(499)),
            RevenueLineFact(kind: .sale, originalTransactionId: "b", dayMs: Self.at(0), money: Self.usd(499)),
            RevenueLineFact(kind: .sale, originalTransactionId: "c", dayMs: Self.at(0), money: Self.usd(499)),
            RevenueLineFact(kind: .sale, originalTransactionId: "trial", dayMs: Self.at(0), money: Self.usd(0)),
            RevenueLineFact(kind: .refund, originalTransactionId: "a", dayMs: Self.at(0), money: Self.usd(-499)),
            // A refund on a day without sales.
            RevenueLineFact(kind: .refund, originalTransactionId: "b", dayMs: Self.at(1), money: Self.usd(-499)),
        ]
        let oneThird = try #require(Decimal(string: "0.3333"))
        let metrics = RefundMetrics(lines: lines, periods: periods)
        let first = metrics.points[0]
        #expect(first.sales == 3)
        #expect(first.refunds == 1)
        #expect(first.refundRate == oneThird)
        #expect(first.refunded.map(\.currency) == ["USD"])
        #expect(first.refunded.map(\.amountMinor) == [499])
        #expect(metrics.members[0][.sales] == ["a", "b", "c"])

        let second = metrics.points[1]
        #expect(second.sales == 0)
        #expect(second.refunds == 1)
        #expect(second.refundRate == 0)
    }

    // MARK: - Cohorts

    @Test func cohortsGroupCustomersByTheirFirstPaidMonth() {
        // Rule: a customer (user) belongs to the month of their first paid period; retained counts
        // paid customers at each month's end from the cohort's month on; revenue is cumulative.
        let months = ReportPeriod.covering(from: "2026-01-01", to: "2026-03-31", by: .month)
        let lives = [
            // u1: paid from Jan 3 to Mar 6, plus a second subscription from Feb 10 to Mar 22
            // (still one January customer, not a February one).
            SubscriptionLife(originalTransactionId: "a", userId: "u1", intervals: [
                Self.interval(.active, 2, 64, monthly: 499), Self.interval(.expired, 64, nil),
            ]),
            SubscriptionLife(originalTransactionId: "a2", userId: "u1", intervals: [
                Self.interval(.active, 40, 80, monthly: 299), Self.interval(.expired, 80, nil),
            ]),
            // u2: a trial from Jan 11, paid from Jan 18 on.
            SubscriptionLife(originalTransactionId: "b", userId: "u2", intervals: [
                Self.interval(.trial, 10, 17), Self.interval(.active, 17, 110, monthly: 499),
            ]),
            // u3: paid from Feb 3 on.
            SubscriptionLife(originalTransactionId: "c", userId: "u3", intervals: [
                Self.interval(.active, 33, 120, monthly: 499),
            ]),
        ]
        let money = [
            SubscriptionMoney(originalTransactionId: "a", dayMs: Self.at(2), money: Self.usd(499)),
            SubscriptionMoney(originalTransactionId: "a", dayMs: Self.at(33), money: Self.usd(499)),
            SubscriptionMoney(originalTransactionId: "a2", dayMs: Self.at(40), money: Self.usd(299)),
            SubscriptionMoney(originalTransactionId: "b", dayMs: Self.at(17), money: Self.usd(499)),
            SubscriptionMoney(originalTransactionId: "b", dayMs: Self.at(48), money: Self.usd(499)),
            SubscriptionMoney(originalTransactionId: "b", dayMs: Self.at(79), money: Self.usd(499)),
            SubscriptionMoney(originalTransactionId: "c", dayMs: Self.at(33), money: Self.usd(499)),
            SubscriptionMoney(originalTransactionId: "c", dayMs: Self.at(61), money: Self.usd(499)),
        ]
        let cohorts = CohortMetrics(lives: lives, money: money, months: months)
        #expect(cohorts.cohorts.map(\.cohort) == ["2026-01", "2026-02"])
        #expect(cohorts.cohorts.map(\.customers) == [2, 1])
        #expect(cohorts.cohorts.map(\.currency) == ["USD", "USD"])
        #expect(cohorts.members == [["a", "a2", "b"], ["c"]])

        let january = cohorts.cohorts[0], february = cohorts.cohorts[1]
        // One entry per month from the cohort's through March.
        #expect(january.retained.count == 3)
        #expect(february.retained.count == 2)
        #expect(january.retained == [2, 2, 1])
        #expect(february.retained == [1, 1])
        // Cumulative: never decreasing without refunds.
        #expect(january.revenueMinor == [998, 2295, 2794])
        #expect(february.revenueMinor == [499, 998])
        for cohort in cohorts.cohorts {
            #expect(cohort.revenueMinor.count == cohort.retained.count)
            #expect(zip(cohort.revenueMinor, cohort.revenueMinor.dropFirst()).allSatisfy { $0 <= $1 })
        }
    }
}
