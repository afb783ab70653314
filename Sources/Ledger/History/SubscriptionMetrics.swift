/// One subscription's history as the reports read it: the intervals of its states (already cut
/// to the product asked for, if one was) and who holds it.
public struct SubscriptionLife: Sendable, Hashable {
    public var originalTransactionId: String
    public var userId: String
    public var intervals: [SubscriptionHistory.Interval]

    public init(originalTransactionId: String, userId: String, intervals: [SubscriptionHistory.Interval]) {
        self.originalTransactionId = originalTransactionId
        self.userId = userId
        self.intervals = intervals
    }

    /// The interval holding `instantMs`, if any.
    public func state(at instantMs: Int64) -> SubscriptionHistory.Interval? {
        // Intervals are sorted and do not overlap: the last one starting at or before the instant.
        var low = 0, high = intervals.count
        while low < high {
            let mid = (low + high) / 2
            if intervals[mid].startMs <= instantMs { low = mid + 1 } else { high = mid }
        }
        guard low > 0, intervals[low - 1].contains(instantMs) else { return nil }
        return intervals[low - 1]
    }

    public func hasAccess(at instantMs: Int64) -> Bool { state(at: instantMs)?.state.givesAccess ?? false }

    /// The price last paid as a month's worth at `instantMs`, while a paid state holds.
    public func mrr(at instantMs: Int64) -> Money? {
        guard let interval = state(at: instantMs), interval.state.isPaid else { return nil }
        return interval.monthly
    }

    /// When its first paid period began.
    public var firstPaidMs: Int64? { intervals.first { $0.state == .active }?.startMs }

    /// When a free trial turned paid: the first paid period's start, if a trial led to it with
    /// nothing but a grace period or billing retry between (no expiry, no gap).
    public var conversionMs: Int64? {
        guard let paid = intervals.firstIndex(where: { $0.state == .active }) else { return nil }
        var index = paid - 1
        while index >= 0 {
            let interval = intervals[index]
            guard interval.endMs == intervals[index + 1].startMs else { return nil }
            if interval.state == .trial { return intervals[paid].startMs }
            guard interval.state == .gracePeriod || interval.state == .billingRetry else { return nil }
            index -= 1
        }
        return nil
    }

    /// When each free trial began (a trial run that continues another is one trial).
    public var trialStartsMs: [Int64] {
        intervals.indices.filter { i in
            intervals[i].state == .trial && !(i > 0 && intervals[i - 1].state == .trial && intervals[i - 1].endMs == intervals[i].startMs)
        }.map { intervals[$0].startMs }
    }

    /// When each run of access that included a paid period ended: the churns, before the
    /// period boundaries decide which count.
    public var paidAccessEndsMs: [Int64] {
        var ends: [Int64] = []
        var paid = false
        for (i, interval) in intervals.enumerated() where interval.state.givesAccess {
            paid = paid || interval.state.isPaid
            let continues = i + 1 < intervals.count && intervals[i + 1].state.givesAccess && intervals[i + 1].startMs == interval.endMs
            guard !continues else { continue }
            if paid, let end = interval.endMs { ends.append(end) }
            paid = false
        }
        return ends
    }
}

/// The figures of `GET /v1/reports/subscriptions` for each period, computed from subscriptions'
/// histories, and the original transaction ids behind each (the drill-down). The definitions
/// (docs/finance-over-time.md) are those of the contract's "Finance over time":
/// - a state counts at the period's last instant; `active` has access (trial and grace period
///   included, billing retry not);
/// - `new`: the first paid period began in the period (a converted trial at its conversion);
/// - `churned`: a run of access that included a paid period ended in the period and had not
///   resumed by its end (so a billing retry still open at the end is churn, and its recovery a
///   reactivation); `reactivated`: access at the end, none at the start, a paid run ended before;
/// - movement compares each subscription's MRR at the period's start and end.
public struct SubscriptionMetrics: Sendable {
    /// A figure whose subscriptions can be listed.
    public enum Figure: String, Sendable, Hashable, CaseIterable {
        case active, inTrial = "in_trial", inGracePeriod = "in_grace_period", inBillingRetry = "in_billing_retry"
        case new, churned, reactivated, trialsStarted = "trials_started", trialsConverted = "trials_converted"
        /// Paid subscriptions counted in MRR at the period's end.
        case mrr
        case movementNew = "movement_new", movementExpansion = "movement_expansion", movementContraction = "movement_contraction"
        case movementChurn = "movement_churn", movementReactivation = "movement_reactivation"
    }

    public struct CurrencyMRR: Sendable, Hashable, Codable {
        public var currency: String
        public var mrrMinor: Int64
    }

    /// Contraction and churn as positive amounts: end MRR = start MRR + new + expansion +
    /// reactivation − contraction − churn, per currency.
    public struct Movement: Sendable, Hashable, Codable {
        public var currency: String
        public var newMinor: Int64 = 0
        public var expansionMinor: Int64 = 0
        public var contractionMinor: Int64 = 0
        public var churnMinor: Int64 = 0
        public var reactivationMinor: Int64 = 0

        public init(currency: String) { self.currency = currency }
    }

    public struct Point: Sendable, Hashable, Codable {
        public var period: String
        public var active: Int
        public var inTrial: Int
        public var inGracePeriod: Int
        public var inBillingRetry: Int
        public var new: Int
        public var churned: Int
        public var reactivated: Int
        public var trialsStarted: Int
        public var trialsConverted: Int
        public var mrr: [CurrencyMRR]
        public var movement: [Movement]
    }

    public var points: [Point]
    /// Per period (in `points`' order), each figure's original transaction ids, sorted.
    public var members: [[Figure: [String]]]

    public init(lives: [SubscriptionLife], periods: [ReportPeriod]) {
        var sets = periods.map { _ in [Figure: [String]]() }
        var mrr = periods.map { _ in [String: Int64]() }
        var movement = periods.map { _ in [String: Movement]() }
        for life in lives.sorted(by: { $0.originalTransactionId < $1.originalTransactionId }) {
            guard let first = life.intervals.first?.startMs else { continue }
            let id = life.originalTransactionId
            let firstPaid = life.firstPaidMs
            let conversion = life.conversionMs
            let trials = life.trialStartsMs
            let churns = life.paidAccessEndsMs
            for (index, period) in periods.enumerated() where period.endMs > first {
                func add(_ figure: Figure) { sets[index][figure, default: []].append(id) }
                func within(_ instant: Int64) -> Bool { period.startMs <= instant && instant < period.endMs }
                let end = life.state(at: period.lastMs)
                let accessAtEnd = end?.state.givesAccess ?? false
                let accessAtStart = life.hasAccess(at: period.startMs - 1)
                switch end?.state {
                case .trial?: add(.active); add(.inTrial)
                case .active?: add(.active)
                case .gracePeriod?: add(.active); add(.inGracePeriod)
                case .billingRetry?: add(.inBillingRetry)
                default: break
                }
                if let firstPaid, within(firstPaid) { add(.new) }
                if let conversion, within(conversion) { add(.trialsConverted) }
                if trials.contains(where: within) { add(.trialsStarted) }
                if !accessAtEnd, churns.contains(where: within) { add(.churned) }
                if accessAtEnd, !accessAtStart, churns.contains(where: { $0 < period.startMs }) { add(.reactivated) }

                let before = life.mrr(at: period.startMs - 1)
                let after = life.mrr(at: period.lastMs)
                if let after {
                    add(.mrr)
                    mrr[index][after.currency, default: 0] += after.minorUnits
                }
                func move(_ currency: String, _ figure: Figure, _ change: (inout Movement) -> Void) {
                    change(&movement[index][currency, default: Movement(currency: currency)])
                    add(figure)
                }
                switch (before, after) {
                case (nil, let a?):
                    if let firstPaid, firstPaid >= period.startMs {
                        move(a.currency, .movementNew) { $0.newMinor += a.minorUnits }
                    } else {
                        move(a.currency, .movementReactivation) { $0.reactivationMinor += a.minorUnits }
                    }
                case (let b?, nil):
                    move(b.currency, .movementChurn) { $0.churnMinor += b.minorUnits }
                case (let b?, let a?) where b.currency != a.currency:
                    // A price in another currency: the old one contracts whole, the new one expands.
                    move(b.currency, .movementContraction) { $0.contractionMinor += b.minorUnits }
                    move(a.currency, .movementExpansion) { $0.expansionMinor += a.minorUnits }
                case (let b?, let a?) where a.minorUnits > b.minorUnits:
                    move(a.currency, .movementExpansion) { $0.expansionMinor += a.minorUnits - b.minorUnits }
                case (let b?, let a?) where a.minorUnits < b.minorUnits:
                    move(a.currency, .movementContraction) { $0.contractionMinor += b.minorUnits - a.minorUnits }
                default: break
                }
            }
        }
        // Lives are taken in id order and each adds a figure at most once a period: the lists are
        // sorted and without repeats as they stand.
        members = sets
        points = periods.indices.map { i in
            let count = { (figure: Figure) in sets[i][figure]?.count ?? 0 }
            return Point(
                period: periods[i].label, active: count(.active), inTrial: count(.inTrial), inGracePeriod: count(.inGracePeriod),
                inBillingRetry: count(.inBillingRetry), new: count(.new), churned: count(.churned), reactivated: count(.reactivated),
                trialsStarted: count(.trialsStarted), trialsConverted: count(.trialsConverted),
                mrr: mrr[i].keys.sorted().map { CurrencyMRR(currency: $0, mrrMinor: mrr[i][$0]!) },
                movement: movement[i].keys.sorted().map { movement[i][$0]! })
        }
    }

    /// The original transaction ids behind `figure` in the period labelled `period`; nil when
    /// the report has no such period.
    public func originals(of figure: Figure, in period: String) -> [String]? {
        guard let index = points.firstIndex(where: { $0.period == period }) else { return nil }
        return members[index][figure] ?? []
    }
}
