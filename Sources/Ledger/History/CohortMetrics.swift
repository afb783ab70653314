/// A subscription's money as revenue lines give it: a sale (positive), a refund (negative) or
/// a reversed refund (positive), on the UTC day it moved.
public struct SubscriptionMoney: Sendable, Hashable {
    public var originalTransactionId: String
    /// Milliseconds since 1970, UTC: the start of the line's day.
    public var dayMs: Int64
    public var money: Money

    public init(originalTransactionId: String, dayMs: Int64, money: Money) {
        self.originalTransactionId = originalTransactionId
        self.dayMs = dayMs
        self.money = money
    }
}

/// The figures of `GET /v1/reports/cohorts`: customers grouped by the month their first paid
/// subscription period began (across the subscriptions in scope), how many still paid at the
/// end of each month since (grace period included, trials and billing retry not), and what
/// their subscriptions brought, gross minus refunds, cumulated month by month.
///
/// A cohort is one month and one currency: a customer belongs to the currency of their first
/// paid period, and their cohort's revenue sums the lines in that currency only (money is never
/// added across currencies; a customer who later pays in another currency is rare, and that
/// money stays in the revenue report).
public struct CohortMetrics: Sendable {
    public struct Cohort: Sendable, Hashable, Codable {
        /// `YYYY-MM`.
        public var cohort: String
        public var customers: Int
        /// Per month from the cohort's through the report's last.
        public var retained: [Int]
        public var revenueMinor: [Int64]
        public var currency: String
    }

    public var cohorts: [Cohort]
    /// Per cohort (in `cohorts`' order), its customers' original transaction ids, sorted.
    public var members: [[String]]

    /// - Parameter months: the report's months (`ReportPeriod.covering(…, by: .month)`).
    public init(lives: [SubscriptionLife], money: [SubscriptionMoney], months: [ReportPeriod]) {
        var byUser: [String: [SubscriptionLife]] = [:]
        for life in lives { byUser[life.userId, default: []].append(life) }
        var byOriginal: [String: [SubscriptionMoney]] = [:]
        for line in money { byOriginal[line.originalTransactionId, default: []].append(line) }

        struct Key: Hashable, Comparable {
            var month: Int
            var currency: String
            static func < (a: Key, b: Key) -> Bool { (a.month, a.currency) < (b.month, b.currency) }
        }
        var groups: [Key: [[SubscriptionLife]]] = [:]
        for (_, owned) in byUser {
            // The customer's first paid period, and the currency it was paid in.
            let firsts = owned.compactMap { life in life.firstPaidMs.map { (life, $0) } }
            guard let (life, start) = firsts.min(by: { ($0.1, $0.0.originalTransactionId) < ($1.1, $1.0.originalTransactionId) }),
                  let month = months.firstIndex(where: { $0.startMs <= start && start < $0.endMs })
            else { continue }
            let currency = life.state(at: start)?.monthly?.currency
                ?? byOriginal[life.originalTransactionId]?.min { $0.dayMs < $1.dayMs }?.money.currency ?? "unknown"
            groups[Key(month: month, currency: currency), default: []].append(owned)
        }
        var cohorts: [Cohort] = []
        var members: [[String]] = []
        for key in groups.keys.sorted() {
            let customers = groups[key]!
            let since = months[key.month...]
            let retained = since.map { month in
                customers.filter { owned in owned.contains { $0.mrrState(at: month.lastMs) } }.count
            }
            let lines = customers.flatMap { $0.flatMap { byOriginal[$0.originalTransactionId] ?? [] } }.filter { $0.money.currency == key.currency }
            var total: Int64 = 0
            var consumed = 0
            let sorted = lines.sorted { $0.dayMs < $1.dayMs }
            let revenue = since.map { month -> Int64 in
                while consumed < sorted.count, sorted[consumed].dayMs < month.endMs {
                    total += sorted[consumed].money.minorUnits
                    consumed += 1
                }
                return total
            }
            cohorts.append(Cohort(
                cohort: months[key.month].label, customers: customers.count, retained: retained, revenueMinor: revenue, currency: key.currency))
            members.append(customers.flatMap { $0.map(\.originalTransactionId) }.sorted())
        }
        self.cohorts = cohorts
        self.members = members
    }
}

extension SubscriptionLife {
    /// Paid access at `instantMs`: a paid period or a grace period.
    func mrrState(at instantMs: Int64) -> Bool { state(at: instantMs)?.state.isPaid ?? false }
}
