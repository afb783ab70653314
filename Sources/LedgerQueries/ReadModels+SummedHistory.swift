import Ledger
import LedgerProjections
import Postgres

extension ReadModels {
    /// The most subscriptions still marked (`history_dirty`) that a report corrects the sums
    /// for: past it (a release's first fill, a changed plan) reading every history is as fast.
    static let correctedAtMost = 20_000

    /// The subscriptions report's points from the sums (`history_contributions`): the rows of
    /// the periods and the state differences before them, corrected for the subscriptions
    /// marked since they were summed (their old contributions out, their current ones in), all
    /// in one snapshot, so the answer is the one every history would give. Nil when the sums
    /// cannot answer: summed under another commission plan, or too much left to sum.
    static func summedPoints(_ query: HistoryQuery, legacyApp: String, on connection: Connection) throws -> [SubscriptionMetrics.Point]? {
        // The sums and what is marked must be of one moment (the summarizer commits both): a
        // snapshot of its own, or the caller's transaction.
        if connection.isInTransaction { return try summed(query, legacyApp: legacyApp, on: connection) }
        return try connection.transaction { connection in
            _ = try connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            return try summed(query, legacyApp: legacyApp, on: connection)
        }
    }

    private static func summed(_ query: HistoryQuery, legacyApp: String, on connection: Connection) throws -> [SubscriptionMetrics.Point]? {
        guard let first = query.periods.first, let last = query.periods.last else { return [] }
        let plan: String? = try connection.query("SELECT commission_plan FROM history_summary").first?.decode(0)
        guard plan == query.commission.rawValue else { return nil }
        let marked: [String] = try connection.query("""
            SELECT original_transaction_id FROM history_dirty ORDER BY 1 LIMIT \(Int64(correctedAtMost + 1))
            """).map { try $0.decode(0) }
        guard marked.count <= correctedAtMost else { return nil }
        let granularity = HistoryContributions.Granularity(query.interval)
        let product = query.productId ?? ""
        var rows = try StoredContributions.read(
            environment: query.environment, bundleId: query.bundleId, productId: product, granularity: granularity,
            firstDay: HistoryContributions.day(of: first.startMs), lastDay: HistoryContributions.day(of: last.lastMs), on: connection)
        if !marked.isEmpty {
            func correct(_ life: SubscriptionLife, by sign: Int64) {
                for (key, figures) in HistoryContributions.of(life)
                where key.productId == product && (key.granularity == .state || key.granularity == granularity) {
                    let summed = HistoryContributions.Key(productId: "", granularity: key.granularity, periodDay: key.periodDay, currency: key.currency)
                    var row = rows[summed] ?? HistoryContributions.Figures()
                    if sign > 0 { row += figures } else { row -= figures }
                    rows[summed] = row
                }
            }
            let list = PostgresArray(marked.map { Optional($0) })
            for row in try connection.query("""
                SELECT intervals FROM history_subscriptions
                WHERE original_transaction_id = ANY(\(list)) AND environment = \(query.environment)
                  AND (\(query.bundleId)::text IS NULL OR bundle_id = \(query.bundleId))
                """) {
                correct(try StoredIntervals.life(try row.decode(0)), by: -1)
            }
            let current = try SubscriptionHistories(
                environment: query.environment, bundleId: query.bundleId, originals: marked, commission: query.commission,
                legacyApp: legacyApp, on: connection)
            for (_, life) in current.lives { correct(life, by: 1) }
        }
        return HistoryContributions.points(rows, periods: query.periods, granularity: granularity)
    }
}
