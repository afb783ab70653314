import Testing

@testable import Ledger

/// `SubscriptionSummary`: status and end of access from the merged transactions of one
/// subscription and its newest renewal information.
@Suite("Subscription status from its transactions")
struct SubscriptionSummaryTests {
    static let t0 = Given.t0
    static let day = Given.day

    /// A period of `days` starting `from` days after `t0`.
    static func period(
        _ id: String, _ productId: String = Given.monthly, from: Int64, days: Int64 = 30, cancelledOnDay: Int64? = nil,
        trial: Bool = false, upgraded: Bool = false
    ) -> SubscriptionEntry {
        SubscriptionEntry(
            transactionId: id, productId: productId, purchaseDateMs: t0 + from * day, expiresDateMs: t0 + (from + days) * day,
            cancellationDateMs: cancelledOnDay.map { t0 + $0 * day }, isTrial: trial, isUpgraded: upgraded)
    }

    static func renewal(autoRenew: Bool? = true, inBillingRetry: Bool? = false, graceUntilDay: Int64? = nil) -> RenewalObservation {
        RenewalObservation(
            observedAtMs: t0, autoRenew: autoRenew, autoRenewProductId: Given.monthly, inBillingRetry: inBillingRetry,
            gracePeriodExpiresMs: graceUntilDay.map { t0 + $0 * day })
    }

    static func summary(_ entries: [SubscriptionEntry], _ renewal: RenewalObservation? = nil, onDay day: Int64) -> SubscriptionSummary? {
        SubscriptionSummary(entries: entries, renewal: renewal, nowMs: t0 + day * Self.day)
    }

    static let twoPeriods = [period("S0", from: 0), period("S1", from: 30)]

    @Test("no transaction, no subscription")
    func empty() {
        #expect(Self.summary([], onDay: 0) == nil)
    }

    @Test("active until the latest expiry")
    func active() throws {
        let summary = try #require(Self.summary(Self.twoPeriods, Self.renewal(autoRenew: true), onDay: 45))
        #expect(summary.status == .active)
        #expect(summary.productId == Given.monthly)
        #expect(summary.expiresAtMs == Self.t0 + 60 * Self.day)
        #expect(summary.autoRenew == true)
        #expect(!summary.inTrial)
    }

    @Test("expired after the latest expiry, auto-renew off")
    func expired() throws {
        let summary = try #require(Self.summary(Self.twoPeriods, Self.renewal(autoRenew: false), onDay: 61))
        #expect(summary.status == .expired)
        #expect(summary.expiresAtMs == Self.t0 + 60 * Self.day)
        #expect(summary.autoRenew == false)
    }

    @Test("in the grace period while Apple retries billing, in billing retry after it")
    func gracePeriodThenBillingRetry() {
        let renewal = Self.renewal(inBillingRetry: true, graceUntilDay: 66)
        #expect(Self.summary(Self.twoPeriods, renewal, onDay: 61)?.status == .inGracePeriod)
        #expect(Self.summary(Self.twoPeriods, renewal, onDay: 67)?.status == .inBillingRetry)
        #expect(Self.summary(Self.twoPeriods, Self.renewal(inBillingRetry: true), onDay: 61)?.status == .inBillingRetry)
        #expect(Self.summary(Self.twoPeriods, Self.renewal(inBillingRetry: false, graceUntilDay: 66), onDay: 61)?.status == .expired)
    }

    @Test("revoked when every live transaction was refunded; access ends at the refund")
    func revoked() throws {
        let summary = try #require(Self.summary([Self.period("S0", from: 0, cancelledOnDay: 10)], onDay: 15))
        #expect(summary.status == .revoked)
        #expect(summary.expiresAtMs == Self.t0 + 10 * Self.day)
    }

    @Test("a refund cuts access at its cancellation date, not the period's expiry")
    func refundCutsAccess() {
        let entries = [Self.period("S0", from: 0), Self.period("S1", from: 30, cancelledOnDay: 40)]
        #expect(Self.summary(entries, onDay: 35)?.status == .active)
        #expect(Self.summary(entries, onDay: 35)?.expiresAtMs == Self.t0 + 40 * Self.day)
        #expect(Self.summary(entries, onDay: 45)?.status == .expired)
        #expect(Self.summary(entries, onDay: 45)?.expiresAtMs == Self.t0 + 40 * Self.day)
    }

    @Test("a transaction upgraded away from gives no access: the new plan's entry decides, and it is no refund")
    func upgrade() throws {
        // A yearly plan bought on day 0, upgraded on day 10 to a monthly plan of a higher level.
        let entries = [
            Self.period("Y0", Given.yearly, from: 0, days: 365, cancelledOnDay: 10, upgraded: true),
            Self.period("M1", Given.monthly, from: 10, days: 30),
        ]
        let during = try #require(Self.summary(entries, onDay: 20))
        #expect(during.status == .active)
        #expect(during.productId == Given.monthly)
        #expect(during.expiresAtMs == Self.t0 + 40 * Self.day)
        let after = try #require(Self.summary(entries, onDay: 50))
        #expect(after.status == .expired)
        #expect(after.expiresAtMs == Self.t0 + 40 * Self.day)
    }

    @Test("in trial during a free trial period only")
    func trial() {
        let entries = [Self.period("S0", from: 0, days: 7, trial: true)]
        #expect(Self.summary(entries, onDay: 3)?.inTrial == true)
        #expect(Self.summary(entries, onDay: 8)?.inTrial == false)
        #expect(Self.summary(entries + [Self.period("S1", from: 7)], onDay: 8)?.inTrial == false)
    }
}
