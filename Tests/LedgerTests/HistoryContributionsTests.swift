@testable import Ledger
import Testing

/// The sums the subscriptions report reads (`HistoryContributions`) give the points that counting
/// every history gives (`SubscriptionMetrics`), for every granularity, for a range that starts
/// after the histories do, for each product and every product, and after subscriptions' rows
/// are taken out and put back as the summarizer does when a history changes.
@Suite struct HistoryContributionsTests {
    typealias Sums = [HistoryContributions.Key: HistoryContributions.Figures]

    static func lives(seed: UInt64) -> [SubscriptionLife] {
        var random = SplitMix64(seed: seed)
        return (0..<300).map { SubscriptionMetricsSweepTests.randomLife($0, using: &random) }
    }

    static func sum(_ lives: [SubscriptionLife], into sums: inout Sums, sign: Int64 = 1) {
        for life in lives {
            for (key, figures) in HistoryContributions.of(life) {
                if sign > 0 { sums[key, default: .init()] += figures } else { sums[key, default: .init()] -= figures }
            }
        }
    }

    /// The rows of one product, keyed as a report reads them.
    static func rows(_ sums: Sums, product: String) -> Sums {
        var out: Sums = [:]
        for (key, figures) in sums where key.productId == product {
            out[.init(productId: "", granularity: key.granularity, periodDay: key.periodDay, currency: key.currency), default: .init()] += figures
        }
        return out
    }

    static func cut(_ lives: [SubscriptionLife], to product: String?) -> [SubscriptionLife] {
        guard let product else { return lives }
        return lives.compactMap { life in
            var cut = life
            cut.intervals = life.intervals.filter { $0.productId == product }
            return cut.intervals.isEmpty ? nil : cut
        }
    }

    @Test("summed rows give the points of counting every history", arguments: [1, 2, 3] as [UInt64])
    func sumsMatchTheCount(seed: UInt64) {
        let lives = Self.lives(seed: seed)
        var sums: Sums = [:]
        Self.sum(lives, into: &sums)
        for product in [nil, "monthly", "yearly", "other"] as [String?] {
            for interval in ReportPeriod.Interval.allCases {
                // From the first period, and from one well inside the histories.
                for from in ["2026-01-01", "2026-04-15"] {
                    let periods = ReportPeriod.covering(from: from, to: "2026-10-31", by: interval)
                    let expected = SubscriptionMetrics(lives: Self.cut(lives, to: product), periods: periods).points
                    let got = HistoryContributions.points(
                        Self.rows(sums, product: product ?? ""), periods: periods, granularity: .init(interval))
                    #expect(got == expected, "\(product ?? "all") \(interval) from \(from)")
                }
            }
        }
        // Not a comparison of nothing: the figures are there, and by product they differ.
        let months = ReportPeriod.covering(from: "2026-01-01", to: "2026-10-31", by: .month)
        let all = HistoryContributions.points(Self.rows(sums, product: ""), periods: months, granularity: .month)
        let other = HistoryContributions.points(Self.rows(sums, product: "other"), periods: months, granularity: .month)
        #expect(all.map(\.churned).reduce(0, +) > 10)
        #expect(all.contains { $0.mrr.count == 2 })
        #expect(other.map(\.new).reduce(0, +) > 0)
        #expect(all.map(\.new) != other.map(\.new))
    }

    @Test("taking a subscription's rows out and its new ones in equals summing the new histories")
    func replacingAHistory() {
        let before = Self.lives(seed: 7)
        let after = Self.lives(seed: 8)  // the same ids, other histories
        var sums: Sums = [:]
        Self.sum(before, into: &sums)
        Self.sum(Array(before[0..<150]), into: &sums, sign: -1)
        Self.sum(Array(after[0..<150]), into: &sums)
        let mixed = Array(after[0..<150]) + Array(before[150...])
        var fresh: Sums = [:]
        Self.sum(mixed, into: &fresh)
        #expect(sums.filter { !$0.value.isZero } == fresh.filter { !$0.value.isZero })
        let weeks = ReportPeriod.covering(from: "2026-02-01", to: "2026-09-30", by: .week)
        #expect(HistoryContributions.points(Self.rows(sums, product: ""), periods: weeks, granularity: .week)
            == SubscriptionMetrics(lives: mixed, periods: weeks).points)
    }

    @Test("a state that begins and ends within one day never reaches a day's end: no row")
    func sameDayState() {
        let day: Int64 = 86_400_000
        let start = SubscriptionMetricsSweepTests.t0 + 3_600_000
        let life = SubscriptionLife(originalTransactionId: "o", userId: "u", intervals: [
            .init(state: .trial, startMs: start, endMs: start + 3_600_000, productId: "p", monthly: nil),
            .init(state: .expired, startMs: start + 3_600_000, endMs: nil, productId: "p", monthly: nil),
        ])
        let rows = HistoryContributions.of(life)
        #expect(!rows.keys.contains { $0.granularity == .state })
        // The trial still started that day, week and month.
        let dayRow = rows[.init(productId: "", granularity: .day, periodDay: start / day, currency: "")]
        #expect(dayRow?[.trialsStarted] == 1)
    }
}
