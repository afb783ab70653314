import Primitives

/// What one subscription adds to the subscriptions report, as rows that add up across
/// subscriptions: the report of any range is then a sum of a few rows per period instead of a
/// pass over every subscription's history (table `history_contributions`; at 20,000,000 events a
/// year's report read 472,334 histories, docs/benchmarks.md). The figures are those of
/// `SubscriptionMetrics`, whose rule per period they reuse; `points` turns summed rows back into
/// its points, and the tests hold the two equal on random histories.
///
/// - States at a period's end (active, in trial, grace, retry, MRR) are kept as differences by
///   day (`Granularity.state`): a state counts +1 from the day holding its start to the day
///   holding its end, so the state at a period's end is the sum of the rows up to its last day,
///   whatever the period's length.
/// - The figures of events (new, churned, reactivated, trials, movement) are kept per period
///   of each granularity: they do not add up across granularities (a churn and a return within
///   a month are two events by day and none by month).
/// - `productId` "" is every product: an upgrade is no churn there, but is one in its old
///   product's figures.
public enum HistoryContributions {
    public enum Granularity: String, Sendable, Hashable, CaseIterable, Comparable {
        case state, day, week, month

        public init(_ interval: ReportPeriod.Interval) {
            switch interval {
            case .day: self = .day
            case .week: self = .week
            case .month: self = .month
            }
        }

        public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    }

    /// A row's key within one environment and app.
    public struct Key: Sendable, Hashable, Comparable {
        /// "" for every product.
        public var productId: String
        public var granularity: Granularity
        /// The day (since 1970, UTC) of the difference, or of the period's start.
        public var periodDay: Int64
        /// "" for the counts; a currency for its money.
        public var currency: String

        public init(productId: String, granularity: Granularity, periodDay: Int64, currency: String) {
            self.productId = productId
            self.granularity = granularity
            self.periodDay = periodDay
            self.currency = currency
        }

        public static func < (a: Self, b: Self) -> Bool {
            (a.productId, a.granularity, a.periodDay, a.currency) < (b.productId, b.granularity, b.periodDay, b.currency)
        }
    }

    /// A row's figures, in the order of `Figures.columns`.
    public struct Figures: Sendable, Hashable {
        public static let columns = [
            "active", "in_trial", "in_grace_period", "in_billing_retry", "new", "churned", "reactivated", "trials_started",
            "trials_converted", "mrr_minor", "paying", "movers", "movement_new_minor", "movement_expansion_minor",
            "movement_contraction_minor", "movement_churn_minor", "movement_reactivation_minor",
        ]
        public enum Column: Int, CaseIterable, Sendable {
            case active, inTrial, inGracePeriod, inBillingRetry, new, churned, reactivated, trialsStarted, trialsConverted
            case mrr, paying, movers, movementNew, movementExpansion, movementContraction, movementChurn, movementReactivation
        }

        public var values: [Int64]

        public init(values: [Int64] = Array(repeating: 0, count: Figures.columns.count)) { self.values = values }

        public subscript(_ column: Column) -> Int64 {
            get { values[column.rawValue] }
            set { values[column.rawValue] = newValue }
        }

        public var isZero: Bool { values.allSatisfy { $0 == 0 } }

        public static func += (a: inout Figures, b: Figures) {
            for i in a.values.indices { a.values[i] += b.values[i] }
        }

        public static func -= (a: inout Figures, b: Figures) {
            for i in a.values.indices { a.values[i] -= b.values[i] }
        }
    }

    /// The rows `life` adds (with every product's, and each product's cut of it).
    public static func of(_ life: SubscriptionLife) -> [Key: Figures] {
        var rows: [Key: Figures] = [:]
        var products: [String] = []
        for interval in life.intervals where !products.contains(interval.productId) { products.append(interval.productId) }
        add(life, as: "", to: &rows)
        // A subscription that never changed product is the same life under its one product.
        for product in products {
            let cut = products.count == 1 ? life : SubscriptionLife(
                originalTransactionId: life.originalTransactionId, userId: life.userId,
                intervals: life.intervals.filter { $0.productId == product })
            add(cut, as: product, to: &rows)
        }
        return rows
    }

    private static func add(_ life: SubscriptionLife, as product: String, to rows: inout [Key: Figures]) {
        func row(_ granularity: Granularity, _ day: Int64, _ currency: String = "") -> Key {
            Key(productId: product, granularity: granularity, periodDay: day, currency: currency)
        }
        for interval in life.intervals {
            // The days whose last instant the interval holds: from the day holding its start to
            // the day holding its end, that one excluded.
            let first = day(of: interval.startMs)
            let end = interval.endMs.map(day(of:))
            guard end.map({ first < $0 }) ?? true else { continue }
            for column in SubscriptionMetrics.figures(at: interval.state).compactMap(column(of:)) {
                rows[row(.state, first), default: Figures()][column] += 1
                if let end { rows[row(.state, end), default: Figures()][column] -= 1 }
            }
            if interval.state.isPaid, let monthly = interval.monthly {
                rows[row(.state, first, monthly.currency), default: Figures()][.mrr] += monthly.minorUnits
                rows[row(.state, first, monthly.currency), default: Figures()][.paying] += 1
                if let end {
                    rows[row(.state, end, monthly.currency), default: Figures()][.mrr] -= monthly.minorUnits
                    rows[row(.state, end, monthly.currency), default: Figures()][.paying] -= 1
                }
            }
        }
        let facts = SubscriptionMetrics.Facts(life)
        for granularity in [Granularity.day, .week, .month] {
            var seen = Set<Int64>()
            for interval in life.intervals {
                for instant in [interval.startMs, interval.endMs].compactMap({ $0 }) {
                    let period = period(holding: day(of: instant), granularity)
                    guard seen.insert(period.startMs).inserted else { continue }
                    let start = day(of: period.startMs)
                    let contribution = SubscriptionMetrics.contribution(of: life, facts: facts, in: period)
                    for figure in contribution.figures where !SubscriptionMetrics.stateFigures.contains(figure) {
                        guard let column = column(of: figure) else { continue }
                        rows[row(granularity, start), default: Figures()][column] += 1
                    }
                    for (currency, change) in contribution.movement {
                        var movement = SubscriptionMetrics.Movement(currency: currency)
                        change(&movement)
                        var figures = rows[row(granularity, start, currency), default: Figures()]
                        figures[.movers] += 1
                        figures[.movementNew] += movement.newMinor
                        figures[.movementExpansion] += movement.expansionMinor
                        figures[.movementContraction] += movement.contractionMinor
                        figures[.movementChurn] += movement.churnMinor
                        figures[.movementReactivation] += movement.reactivationMinor
                        rows[row(granularity, start, currency)] = figures
                    }
                }
            }
        }
        // A difference that came back to nothing is no row (a state that began and ended the
        // same day never reached a day's end).
        for (key, figures) in rows where figures.isZero { rows[key] = nil }
    }

    /// The column counting `figure` (MRR and movement are money, kept per currency).
    private static func column(of figure: SubscriptionMetrics.Figure) -> Figures.Column? {
        switch figure {
        case .active: .active
        case .inTrial: .inTrial
        case .inGracePeriod: .inGracePeriod
        case .inBillingRetry: .inBillingRetry
        case .new: .new
        case .churned: .churned
        case .reactivated: .reactivated
        case .trialsStarted: .trialsStarted
        case .trialsConverted: .trialsConverted
        default: nil
        }
    }

    public static func day(of instantMs: Int64) -> Int64 { UTCDays.floorDivide(instantMs, by: UTCDays.millisecondsPerDay).quotient }

    /// The period of `granularity` holding `day` (no label: only its instants are used).
    static func period(holding day: Int64, _ granularity: Granularity) -> ReportPeriod {
        let (start, end) = ReportPeriod.days(holding: day, by: granularity == .week ? .week : granularity == .month ? .month : .day)
        return ReportPeriod(label: "", startMs: start * UTCDays.millisecondsPerDay, endMs: end * UTCDays.millisecondsPerDay)
    }

    /// The report's points for `periods` from summed rows, all of one product: the
    /// `.state` rows up to the last period's last day (all of them from the first day on, or
    /// those before the first period summed into any one day before it) and the rows of the
    /// periods' granularity.
    public static func points(_ rows: [Key: Figures], periods: [ReportPeriod], granularity: Granularity) -> [SubscriptionMetrics.Point] {
        let states = rows.filter { $0.key.granularity == .state }.sorted { $0.key.periodDay < $1.key.periodDay }
        // The rows of events by their period's first day, each day's in order of currency.
        var events: [Int64: [(currency: String, figures: Figures)]] = [:]
        for (key, figures) in rows where key.granularity == granularity { events[key.periodDay, default: []].append((key.currency, figures)) }
        var next = states.startIndex
        var running: [String: Figures] = [:]
        var points: [SubscriptionMetrics.Point] = []
        for period in periods {
            let lastDay = day(of: period.lastMs)
            while next < states.endIndex, states[next].key.periodDay <= lastDay {
                running[states[next].key.currency, default: Figures()] += states[next].value
                next += 1
            }
            let counts = running[""] ?? Figures()
            let happened = (events[day(of: period.startMs)] ?? []).sorted { $0.currency < $1.currency }
            let counted = happened.first { $0.currency.isEmpty }?.figures ?? Figures()
            points.append(SubscriptionMetrics.Point(
                period: period.label, active: Int(counts[.active]), inTrial: Int(counts[.inTrial]), inGracePeriod: Int(counts[.inGracePeriod]),
                inBillingRetry: Int(counts[.inBillingRetry]), new: Int(counted[.new]), churned: Int(counted[.churned]),
                reactivated: Int(counted[.reactivated]), trialsStarted: Int(counted[.trialsStarted]), trialsConverted: Int(counted[.trialsConverted]),
                mrr: running.filter { !$0.key.isEmpty && $0.value[.paying] > 0 }.sorted { $0.key < $1.key }
                    .map { SubscriptionMetrics.CurrencyMRR(currency: $0.key, mrrMinor: $0.value[.mrr]) },
                movement: happened.filter { !$0.currency.isEmpty && $0.figures[.movers] > 0 }.map { row in
                    var movement = SubscriptionMetrics.Movement(currency: row.currency)
                    movement.newMinor = row.figures[.movementNew]
                    movement.expansionMinor = row.figures[.movementExpansion]
                    movement.contractionMinor = row.figures[.movementContraction]
                    movement.churnMinor = row.figures[.movementChurn]
                    movement.reactivationMinor = row.figures[.movementReactivation]
                    return movement
                }))
        }
        return points
    }
}
