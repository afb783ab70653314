import Ledger
import Testing

/// Churn, reactivation and monthly prices, from a subscription's periods alone.
@Suite struct SubscriptionLapsesTests {
    static let day: Int64 = 86_400_000

    static func entry(_ id: String, from start: Int64, days: Int64, cancelled: Int64? = nil, upgraded: Bool = false) -> SubscriptionEntry {
        SubscriptionEntry(
            transactionId: id, productId: "pro", purchaseDateMs: start * day, expiresDateMs: (start + days) * day,
            cancellationDateMs: cancelled.map { $0 * day }, isTrial: false, isUpgraded: upgraded)
    }

    @Test func aGapIsAChurnAndAReactivation() {
        // Paid 0–30, 30–60, gone, back at 100–130 and still active at day 110.
        let entries = [Self.entry("3", from: 100, days: 30), Self.entry("1", from: 0, days: 30), Self.entry("2", from: 30, days: 30)]
        let lapses = SubscriptionLapses.lapses(of: entries, status: .active, nowMs: 110 * Self.day)
        #expect(lapses == [.init(churnedAtMs: 60 * Self.day, reactivatedAtMs: 100 * Self.day)])
    }

    @Test func anEndedSubscriptionHasChurnedWhenItEnded() {
        let entries = [Self.entry("1", from: 0, days: 30), Self.entry("2", from: 30, days: 30)]
        #expect(SubscriptionLapses.lapses(of: entries, status: .expired, nowMs: 90 * Self.day)
            == [.init(churnedAtMs: 60 * Self.day, reactivatedAtMs: nil)])
        // In billing retry the subscriber has not left yet.
        #expect(SubscriptionLapses.lapses(of: entries, status: .inBillingRetry, nowMs: 90 * Self.day).isEmpty)
    }

    @Test func aRefundCutsItsPeriodShortAndAnUpgradeHandsItsTimeOn() {
        // Refunded on day 10 of 0–30; the next period starts on 30: a lapse from 10 to 30.
        let refunded = [Self.entry("1", from: 0, days: 30, cancelled: 10), Self.entry("2", from: 30, days: 30)]
        #expect(SubscriptionLapses.lapses(of: refunded, status: .active, nowMs: 40 * Self.day)
            == [.init(churnedAtMs: 10 * Self.day, reactivatedAtMs: 30 * Self.day)])
        // Upgraded on day 10: the new plan's period starts then, no lapse.
        let upgraded = [Self.entry("1", from: 0, days: 30, cancelled: 10, upgraded: true), Self.entry("2", from: 10, days: 30)]
        #expect(SubscriptionLapses.lapses(of: upgraded, status: .active, nowMs: 20 * Self.day).isEmpty)
        // Upgraded on day 40, in its second period: the first period, the upgraded one until the
        // upgrade and the new plan follow each other with no lapse (the upgraded period counts).
        let later = [
            Self.entry("1", from: 0, days: 30), Self.entry("2", from: 30, days: 30, cancelled: 40, upgraded: true), Self.entry("3", from: 40, days: 30),
        ]
        #expect(SubscriptionLapses.lapses(of: later, status: .active, nowMs: 50 * Self.day).isEmpty)
    }

    @Test func monthlyPricesFollowCalendarPeriods() {
        #expect(SubscriptionLapses.monthlyMinor(price: 499, serviceMs: 31 * Self.day) == 499)
        #expect(SubscriptionLapses.monthlyMinor(price: 499, serviceMs: 28 * Self.day) == 499)
        #expect(SubscriptionLapses.monthlyMinor(price: 4999, serviceMs: 365 * Self.day) == 417)
        #expect(SubscriptionLapses.monthlyMinor(price: 4999, serviceMs: 366 * Self.day) == 417)
        #expect(SubscriptionLapses.monthlyMinor(price: 1499, serviceMs: 92 * Self.day) == 500)
        #expect(SubscriptionLapses.monthlyMinor(price: 199, serviceMs: 7 * Self.day) == 862)
        #expect(SubscriptionLapses.monthlyMinor(price: 199, serviceMs: 0) == nil)
    }
}
