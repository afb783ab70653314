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
    /// period boundaries decide which count. A grace period alone does not make a run paid: a
    /// trial whose first charge failed and never recovered is an unconverted trial, not churn.
    public var paidAccessEndsMs: [Int64] {
        var ends: [Int64] = []
        var paid = false
        for (i, interval) in intervals.enumerated() where interval.state.givesAccess {
            paid = paid || interval.state == .active
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

    /// Points already counted (`HistoryContributions.points`, from the summed rows).
    public init(points: [Point]) { self.points = points }

    /// Counts in one pass over each subscription's intervals, not over every period: the states
    /// at periods' ends are added as differences over the periods each interval covers, and the
    /// figures that need an event (new, churn, a trial, a conversion, a reactivation, movement)
    /// are computed only for the periods holding one of the subscription's interval boundaries,
    /// where alone they can be non-zero. `contribution(of:in:)` is the rule per period; the
    /// tests check the pass against it period by period.
    public init(lives: [SubscriptionLife], periods: [ReportPeriod]) {
        let lives = lives.sorted { $0.originalTransactionId < $1.originalTransactionId }
        let count = periods.count
        // Differences over periods: [a, b) gets +1, stored as +1 at a and −1 at b.
        var states = [Figure: [Int]]()
        for figure in [Figure.active, .inTrial, .inGracePeriod, .inBillingRetry] { states[figure] = Array(repeating: 0, count: count + 1) }
        var mrrDiff: [String: [Int64]] = [:]
        var payingDiff: [String: [Int]] = [:]
        var events = periods.map { _ in [Figure: Int]() }
        var movement = periods.map { _ in [String: Movement]() }
        for life in lives {
            for interval in life.intervals {
                // The periods whose last instant the interval holds.
                let a = Self.firstPeriod(endingAfter: interval.startMs, in: periods)
                let b = interval.endMs.map { Self.firstPeriod(endingAfter: $0, in: periods) } ?? count
                guard a < b else { continue }
                for figure in Self.figures(at: interval.state) {
                    states[figure]![a] += 1
                    states[figure]![b] -= 1
                }
                if interval.state.isPaid, let monthly = interval.monthly {
                    mrrDiff[monthly.currency, default: Array(repeating: 0, count: count + 1)][a] += monthly.minorUnits
                    mrrDiff[monthly.currency]![b] -= monthly.minorUnits
                    // How many pay in the currency: a currency is listed while someone does.
                    payingDiff[monthly.currency, default: Array(repeating: 0, count: count + 1)][a] += 1
                    payingDiff[monthly.currency]![b] -= 1
                }
            }
            let facts = Facts(life)
            var seen = Set<Int>()
            for interval in life.intervals {
                for instant in [interval.startMs, interval.endMs].compactMap({ $0 }) {
                    guard let index = Self.period(holding: instant, in: periods), seen.insert(index).inserted else { continue }
                    let contribution = Self.contribution(of: life, facts: facts, in: periods[index])
                    for figure in contribution.figures where !Self.stateFigures.contains(figure) { events[index][figure, default: 0] += 1 }
                    for (currency, change) in contribution.movement { change(&movement[index][currency, default: Movement(currency: currency)]) }
                }
            }
        }
        var running = [Figure: Int](), mrrRunning = [String: Int64](), payingRunning = [String: Int]()
        var points: [Point] = []
        for (index, period) in periods.enumerated() {
            for (figure, diffs) in states { running[figure, default: 0] += diffs[index] }
            for (currency, diffs) in mrrDiff { mrrRunning[currency, default: 0] += diffs[index] }
            for (currency, diffs) in payingDiff { payingRunning[currency, default: 0] += diffs[index] }
            func count(_ figure: Figure) -> Int { Self.stateFigures.contains(figure) ? running[figure] ?? 0 : events[index][figure] ?? 0 }
            points.append(Point(
                period: period.label, active: count(.active), inTrial: count(.inTrial), inGracePeriod: count(.inGracePeriod),
                inBillingRetry: count(.inBillingRetry), new: count(.new), churned: count(.churned), reactivated: count(.reactivated),
                trialsStarted: count(.trialsStarted), trialsConverted: count(.trialsConverted),
                mrr: payingRunning.keys.sorted().filter { payingRunning[$0]! > 0 }.map { CurrencyMRR(currency: $0, mrrMinor: mrrRunning[$0]!) },
                movement: movement[index].keys.sorted().map { movement[index][$0]! }))
        }
        self.points = points
    }

    /// The state figures a subscription in `state` counts in: access (`active`) is a trial, a
    /// paid period or a grace period; billing retry is not.
    static func figures(at state: SubscriptionHistory.State) -> [Figure] {
        switch state {
        case .trial: [.active, .inTrial]
        case .active: [.active]
        case .gracePeriod: [.active, .inGracePeriod]
        case .billingRetry: [.inBillingRetry]
        case .expired, .revoked: []
        }
    }

    /// The figures that are states at a period's end (counted over intervals, not events).
    static let stateFigures: Set<Figure> = [.active, .inTrial, .inGracePeriod, .inBillingRetry, .mrr]

    /// The original transaction ids behind `figure` in the period labelled `period`, from the
    /// rule per period; nil when `periods` has no such period.
    public static func originals(of figure: Figure, in period: String, periods: [ReportPeriod], lives: [SubscriptionLife]) -> [String]? {
        guard let found = periods.first(where: { $0.label == period }) else { return nil }
        return lives.filter { life in
            contribution(of: life, facts: Facts(life), in: found).figures.contains(figure)
        }.map(\.originalTransactionId).sorted()
    }

    /// What a subscription knows of itself once, for every period.
    struct Facts {
        var firstPaid: Int64?
        var conversion: Int64?
        var trials: [Int64]
        var churns: [Int64]

        init(_ life: SubscriptionLife) {
            firstPaid = life.firstPaidMs
            conversion = life.conversionMs
            trials = life.trialStartsMs
            churns = life.paidAccessEndsMs
        }
    }

    /// What one subscription adds to one period: the figures that count it, and its movement
    /// per currency. The rule every figure follows (see the type's comment).
    static func contribution(
        of life: SubscriptionLife, facts: Facts, in period: ReportPeriod
    ) -> (figures: [Figure], movement: [(String, (inout Movement) -> Void)]) {
        var figures: [Figure] = []
        var moves: [(String, (inout Movement) -> Void)] = []
        func within(_ instant: Int64) -> Bool { period.startMs <= instant && instant < period.endMs }
        let end = life.state(at: period.lastMs)
        let accessAtEnd = end?.state.givesAccess ?? false
        let accessAtStart = life.hasAccess(at: period.startMs - 1)
        if let end { figures += Self.figures(at: end.state) }
        if let firstPaid = facts.firstPaid, within(firstPaid) { figures.append(.new) }
        if let conversion = facts.conversion, within(conversion) { figures.append(.trialsConverted) }
        if facts.trials.contains(where: within) { figures.append(.trialsStarted) }
        if !accessAtEnd, facts.churns.contains(where: within) { figures.append(.churned) }
        if accessAtEnd, !accessAtStart, facts.churns.contains(where: { $0 < period.startMs }) { figures.append(.reactivated) }

        let before = life.mrr(at: period.startMs - 1)
        let after = life.mrr(at: period.lastMs)
        if after != nil { figures.append(.mrr) }
        func move(_ currency: String, _ figure: Figure, _ change: @escaping (inout Movement) -> Void) {
            moves.append((currency, change))
            figures.append(figure)
        }
        switch (before, after) {
        case (nil, let a?):
            if let firstPaid = facts.firstPaid, firstPaid >= period.startMs {
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
        return (figures, moves)
    }

    /// The index of the first period ending after `instant` (whose last instant is at or after
    /// it); `periods.count` when none does.
    static func firstPeriod(endingAfter instant: Int64, in periods: [ReportPeriod]) -> Int {
        var low = 0, high = periods.count
        while low < high {
            let mid = (low + high) / 2
            if periods[mid].endMs > instant { high = mid } else { low = mid + 1 }
        }
        return low
    }

    /// The index of the period holding `instant`, if one does.
    static func period(holding instant: Int64, in periods: [ReportPeriod]) -> Int? {
        let index = firstPeriod(endingAfter: instant, in: periods)
        return index < periods.count && periods[index].startMs <= instant ? index : nil
    }
}
