@testable import Ledger
import Testing

/// `SubscriptionMetrics` counts in one pass over intervals; `contribution(of:in:)` is the rule
/// per period. On random histories, the pass and the rule applied to every subscription in every
/// period give the same points, and the drill-down lists exactly what each count counted.
@Suite struct SubscriptionMetricsSweepTests {
    static let day: Int64 = 86_400_000
    static let t0: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z

    static func randomLife(_ index: Int, using random: inout SplitMix64) -> SubscriptionLife {
        var entries: [SubscriptionEntry] = []
        var observations: [RenewalObservation] = []
        var at = t0 + Int64.random(in: 0..<100, using: &random) * day + Int64.random(in: 0..<day, using: &random)
        let product = Bool.random(using: &random) ? "monthly" : "yearly"
        for period in 0..<Int.random(in: 1...6, using: &random) {
            let length = Int64.random(in: 3...40, using: &random) * day
            let trial = period == 0 && Bool.random(using: &random)
            let refunded = Int.random(in: 0..<8, using: &random) == 0
            entries.append(SubscriptionEntry(
                transactionId: "\(index)-\(period)", productId: period > 2 ? "other" : product, purchaseDateMs: at, expiresDateMs: at + length,
                cancellationDateMs: refunded ? at + length / 2 : nil, isTrial: trial, isUpgraded: false))
            at += length
            // Sometimes a gap, in which Apple may say it is retrying (with a grace period) and stop.
            if Bool.random(using: &random) {
                let gap = Int64.random(in: 1...30, using: &random) * day
                if Bool.random(using: &random) {
                    observations.append(RenewalObservation(
                        observedAtMs: at, autoRenew: true, autoRenewProductId: nil, inBillingRetry: true,
                        gracePeriodExpiresMs: Bool.random(using: &random) ? at + Int64.random(in: 1...20, using: &random) * day : nil))
                    if Bool.random(using: &random) {
                        observations.append(RenewalObservation(
                            observedAtMs: at + gap / 2, autoRenew: true, autoRenewProductId: nil, inBillingRetry: false, gracePeriodExpiresMs: nil))
                    }
                }
                at += gap
            }
        }
        let currency = index % 7 == 0 ? "EUR" : "USD"
        let intervals = SubscriptionHistory.intervals(entries: entries, observations: observations) { entry in
            Money(minorUnits: entry.productId == "yearly" ? 417 : (entry.transactionId.hasSuffix("-2") ? 999 : 499), currency: currency)
        }
        return SubscriptionLife(originalTransactionId: "o\(index)", userId: "u\(index % 50)", intervals: intervals)
    }

    /// The points from the rule, applied to every subscription in every period.
    static func bruteForce(_ lives: [SubscriptionLife], _ periods: [ReportPeriod]) -> [SubscriptionMetrics.Point] {
        periods.map { period in
            var counts: [SubscriptionMetrics.Figure: Int] = [:]
            var mrr: [String: Int64] = [:]
            var movement: [String: SubscriptionMetrics.Movement] = [:]
            for life in lives {
                let contribution = SubscriptionMetrics.contribution(of: life, facts: .init(life), in: period)
                for figure in contribution.figures { counts[figure, default: 0] += 1 }
                if let paid = life.mrr(at: period.lastMs) { mrr[paid.currency, default: 0] += paid.minorUnits }
                for (currency, change) in contribution.movement { change(&movement[currency, default: .init(currency: currency)]) }
            }
            return SubscriptionMetrics.Point(
                period: period.label, active: counts[.active] ?? 0, inTrial: counts[.inTrial] ?? 0, inGracePeriod: counts[.inGracePeriod] ?? 0,
                inBillingRetry: counts[.inBillingRetry] ?? 0, new: counts[.new] ?? 0, churned: counts[.churned] ?? 0,
                reactivated: counts[.reactivated] ?? 0, trialsStarted: counts[.trialsStarted] ?? 0, trialsConverted: counts[.trialsConverted] ?? 0,
                mrr: mrr.keys.sorted().map { .init(currency: $0, mrrMinor: mrr[$0]!) }, movement: movement.keys.sorted().map { movement[$0]! })
        }
    }

    @Test("the one pass over intervals gives every period's figures as the rule per period does", arguments: [1, 2, 3])
    func sweepMatchesTheRule(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let lives = (0..<300).map { Self.randomLife($0, using: &random) }
        for interval in ReportPeriod.Interval.allCases {
            let periods = ReportPeriod.covering(from: "2026-01-01", to: "2026-10-31", by: interval)
            let metrics = SubscriptionMetrics(lives: lives, periods: periods)
            let expected = Self.bruteForce(lives, periods)
            #expect(metrics.points.count == expected.count)
            for (got, want) in zip(metrics.points, expected) {
                #expect(got == want, "\(interval) \(got.period)")
            }
            // The drill-down lists as many subscriptions as each count says.
            for (index, point) in metrics.points.enumerated() where index % 7 == 0 {
                #expect(SubscriptionMetrics.originals(of: .active, in: point.period, periods: periods, lives: lives)?.count == point.active)
                #expect(SubscriptionMetrics.originals(of: .churned, in: point.period, periods: periods, lives: lives)?.count == point.churned)
                #expect(SubscriptionMetrics.originals(of: .reactivated, in: point.period, periods: periods, lives: lives)?.count == point.reactivated)
                #expect(SubscriptionMetrics.originals(of: .inBillingRetry, in: point.period, periods: periods, lives: lives)?.count == point.inBillingRetry)
            }
        }
        // The histories do hold what the figures count: not a pass over nothing.
        let months = SubscriptionMetrics(lives: lives, periods: ReportPeriod.covering(from: "2026-01-01", to: "2026-10-31", by: .month)).points
        #expect(months.map(\.churned).reduce(0, +) > 10)
        #expect(months.map(\.reactivated).reduce(0, +) > 5)
        #expect(months.map(\.inBillingRetry).reduce(0, +) > 5)
        #expect(months.contains { $0.mrr.count == 2 })
    }
}
