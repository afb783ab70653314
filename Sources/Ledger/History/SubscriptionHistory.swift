/// A subscription's life as intervals of its states, from the transactions Apple showed of it
/// and every renewal state Apple signed for it (`projection_renewal_observations`), dated as
/// Apple dated them. Finance's figures for any past day are read from these intervals, not from
/// today's snapshot; like `SubscriptionSummary`, the result is a function of the sets given, not
/// of the order they were seen in, so a replay gives the same intervals.
public enum SubscriptionHistory {
    public enum State: String, Sendable, Hashable, Codable, CaseIterable {
        /// A free trial (an introductory offer's period).
        case trial
        /// A paid period.
        case active
        /// Billing failed and Apple keeps access open until the grace period ends.
        case gracePeriod = "grace_period"
        /// Billing failed, access ended, and Apple is still trying to charge.
        case billingRetry = "billing_retry"
        case expired
        /// Access ended by a refund or a revocation.
        case revoked

        /// Whether the subscriber has access: a trial, a paid period or a grace period.
        public var givesAccess: Bool { self == .trial || self == .active || self == .gracePeriod }
        /// Whether the subscriber pays for it: counted in MRR (a grace period at the price last paid).
        public var isPaid: Bool { self == .active || self == .gracePeriod }
    }

    /// `[startMs, endMs)`; an open end while nothing has ended it.
    public struct Interval: Sendable, Hashable {
        public var state: State
        public var startMs: Int64
        public var endMs: Int64?
        /// The product the subscriber had: the period's, or the last period's in a gap.
        public var productId: String
        /// The price last paid as a month's worth; nil in a trial and where no state is paid.
        public var monthly: Money?

        public init(state: State, startMs: Int64, endMs: Int64?, productId: String, monthly: Money?) {
            self.state = state
            self.startMs = startMs
            self.endMs = endMs
            self.productId = productId
            self.monthly = monthly
        }

        public func contains(_ instantMs: Int64) -> Bool {
            startMs <= instantMs && endMs.map { instantMs < $0 } ?? true
        }
    }

    /// How far before a paid period's end a renewal state may be signed and still speak of the
    /// gap after it: Apple signs `DID_FAIL_TO_RENEW` at the renewal instant, give or take clocks.
    static let observationSlackMs: Int64 = 60_000

    /// The intervals, sorted and not overlapping, from the first period's start on.
    /// - Parameters:
    ///   - entries: every transaction of the subscription, merged by transaction id.
    ///   - observations: every renewal state Apple signed for it.
    ///   - monthly: a paid transaction's price as a month's worth (`SubscriptionHistory.monthly`).
    public static func intervals(
        entries: [SubscriptionEntry], observations: [RenewalObservation], monthly: (SubscriptionEntry) -> Money?
    ) -> [Interval] {
        var periods = entries.compactMap { e -> (start: Int64, end: Int64, refunded: Bool, entry: SubscriptionEntry)? in
            guard let start = e.purchaseDateMs, let expires = e.expiresDateMs else { return nil }
            let end = e.cancellationDateMs.map { min($0, expires) } ?? expires
            // An upgraded transaction's cancellation is the upgrade, not a refund: access goes on
            // under the new plan.
            return (start, max(start, end), !e.isUpgraded && (e.cancellationDateMs.map { $0 < expires } ?? false), e)
        }.sorted { ($0.start, $0.entry.transactionId) < ($1.start, $1.entry.transactionId) }
        // A period that begins before the one before it ends takes over from its start: an
        // upgrade (or a crossgrade) starts a new plan at once, whether or not Apple has yet shown
        // the old transaction upgraded (a notification of the upgrade names only the new one;
        // the receipt the app sends later marks the old one). Renewals begin where the previous
        // period ends, so they are not cut.
        for index in periods.indices.dropLast() where periods[index + 1].start < periods[index].end {
            periods[index].end = max(periods[index].start, periods[index + 1].start)
            // It ends by the takeover: a refund dated later cut nothing that still counts.
            periods[index].refunded = false
        }
        let signed = observations.sorted { ($0.observedAtMs, $0.inBillingRetry == true ? 1 : 0) < ($1.observedAtMs, $1.inBillingRetry == true ? 1 : 0) }
        var out: [Interval] = []
        var reach = Int64.min
        var last: (refunded: Bool, productId: String, monthly: Money?)?
        for period in periods {
            if let before = last, period.start > reach {
                out += gap(from: reach, to: period.start, after: before, signed: signed)
                reach = period.start
            }
            let from = max(period.start, reach)
            if period.end > from {
                let price = period.entry.isTrial ? nil : monthly(period.entry)
                out.append(Interval(
                    state: period.entry.isTrial ? .trial : .active, startMs: from, endMs: period.end,
                    productId: period.entry.productId, monthly: price))
                last = (period.refunded, period.entry.productId, price)
                reach = period.end
            } else if period.end >= reach, period.refunded {
                // A period refunded whole: access ends where it would have begun.
                last = (true, period.entry.productId, last?.monthly)
                reach = max(reach, period.end)
            }
        }
        if let before = last { out += gap(from: reach, to: nil, after: before, signed: signed) }
        return out
    }

    /// What a subscription was between the end of its access at `from` and the next period's
    /// start at `to` (nil: none yet): revoked after a refund; else, when Apple signed that it
    /// was retrying the charge, a grace period while Apple kept access open, then billing retry
    /// until Apple said it stopped (expired after) or the next period began; else expired.
    private static func gap(
        from: Int64, to: Int64?, after last: (refunded: Bool, productId: String, monthly: Money?), signed: [RenewalObservation]
    ) -> [Interval] {
        func interval(_ state: State, _ start: Int64, _ end: Int64?, monthly: Money? = nil) -> Interval {
            Interval(state: state, startMs: start, endMs: end, productId: last.productId, monthly: monthly)
        }
        if last.refunded { return [interval(.revoked, from, to)] }
        let seen = signed.filter { observation in
            observation.observedAtMs >= from - observationSlackMs && (to.map { observation.observedAtMs < $0 } ?? true)
        }
        guard let firstRetry = seen.firstIndex(where: { $0.inBillingRetry == true }) else { return [interval(.expired, from, to)] }
        // Apple stopped retrying: the first state after the retry began that says so.
        let stopped = seen[(firstRetry + 1)...].first { $0.inBillingRetry == false }.map { max(from, $0.observedAtMs) }
        let retryEnd = [to, stopped].compactMap { $0 }.min()
        var graceEnd = seen.compactMap { $0.gracePeriodExpiresMs }.filter { $0 > from }.max() ?? from
        if let retryEnd { graceEnd = min(graceEnd, retryEnd) }
        var out: [Interval] = []
        // In a grace period the subscriber keeps access at the price last paid.
        if graceEnd > from { out.append(interval(.gracePeriod, from, graceEnd, monthly: last.monthly)) }
        if retryEnd.map({ $0 > graceEnd }) ?? true { out.append(interval(.billingRetry, graceEnd, retryEnd)) }
        if let stopped, stopped == retryEnd, to.map({ $0 > stopped }) ?? true { out.append(interval(.expired, stopped, to)) }
        return out
    }

    /// A paid transaction's price as a month's worth: a commitment billed monthly by its
    /// instalment as Apple signed it, any other plan by its sale (`price`, the revenue line's
    /// gross, or net of tax where a price point says so) named in calendar months
    /// (`SubscriptionLapses.monthlyMinor`: a yearly plan over 12, a weekly one × 52 ÷ 12).
    public static func monthly(_ entry: SubscriptionEntry, sale: Money?, serviceMs: Int64?) -> Money? {
        entry.isTrial ? nil : SubscriptionSummary.monthly(commitment: SubscriptionSummary.CommitmentStanding(entry), sale: sale, serviceMs: serviceMs)
    }
}
