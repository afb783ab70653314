/// When a subscriber left and came back: the runs of paid or trial access in a subscription's
/// transactions, and the gaps between them. A gap (the next period starts after the previous one
/// ended, refunds cutting a period short) is a churn at its start and a reactivation at its end;
/// a subscription whose access ended and is not in billing retry or grace has churned when it
/// ended. Pure, and a function of the set of entries like `SubscriptionSummary`.
public enum SubscriptionLapses {
    public struct Lapse: Sendable, Hashable {
        /// When access ended.
        public var churnedAtMs: Int64
        /// When it started again; nil while the subscriber is still gone.
        public var reactivatedAtMs: Int64?

        public init(churnedAtMs: Int64, reactivatedAtMs: Int64?) {
            self.churnedAtMs = churnedAtMs
            self.reactivatedAtMs = reactivatedAtMs
        }
    }

    public static func lapses(of entries: [SubscriptionEntry], status: SubscriptionSummary.Status, nowMs: Int64) -> [Lapse] {
        // The periods as the history reads them (`SubscriptionHistory`: refunds cut a period
        // short, an upgrade hands its time on at once), without renewal states: a gap between
        // two runs of access is a lapse, and the end of the last one is a churn once the
        // subscription has expired or been revoked (not while in grace or billing retry).
        let intervals = SubscriptionHistory.intervals(entries: entries, observations: []) { _ in nil }
        var lapses: [Lapse] = []
        for gap in intervals where !gap.state.givesAccess {
            if let end = gap.endMs {
                lapses.append(Lapse(churnedAtMs: gap.startMs, reactivatedAtMs: end))
            } else if gap.startMs <= nowMs, status == .expired || status == .revoked {
                lapses.append(Lapse(churnedAtMs: gap.startMs, reactivatedAtMs: nil))
            }
        }
        return lapses
    }

    /// A price for `serviceMs` of access as a month's worth, in the same minor units, rounded
    /// half up. Apple's periods are calendar ones (a "month" is 28 to 31 days), so the period is
    /// first named in whole months (27 days or more) or whole weeks: a monthly plan is its price
    /// whatever the month's length, a yearly one its price over 12, a weekly one its price × 52 / 12.
    public static func monthlyMinor(price: Int64, serviceMs: Int64) -> Int64? {
        guard serviceMs > 0, price >= 0 else { return nil }
        let day: Int64 = 86_400_000
        let days = (serviceMs + day / 2) / day
        if days >= 27 {
            // Whole months: days / 30.436875, rounded.
            let months = max(1, (days * 1_000_000 + 15_218_437) / 30_436_875)
            return (price + months / 2) / months
        }
        let weeks = max(1, (days + 3) / 7)
        return (price * 52 + weeks * 6) / (weeks * 12)
    }
}
