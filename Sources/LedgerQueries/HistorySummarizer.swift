import Foundation
import Ledger
import LedgerProjections
import LedgerStore
import Logging
import Postgres

/// Keeps `history_contributions` (migration 0035): takes the subscriptions the projections
/// marked in `history_dirty` (triggers on their inputs' tables, in the runner's transaction),
/// reads their histories, and replaces what each added before by what it adds now
/// (`HistoryContributions`). One batch per transaction, under the projections' lock, so no
/// page of the runner lands between reading a history and summing it; a report corrects the
/// sums for what is still marked (`ReadModels.summedPoints`), so a lagging summarizer makes a
/// report slower, never different.
public struct HistorySummarizer: Sendable {
    let pool: ConnectionPool
    /// The plan the money is summed under: the server's, as the reports it serves ask.
    let commission: CommissionPlan
    /// Subscriptions per transaction: what the runner's next page may wait for.
    let batchSize: Int
    let logger: Logger
    private let legacy = LegacyAppName()

    public init(pool: ConnectionPool, commission: CommissionPlan, batchSize: Int = 1_000, logger: Logger) {
        self.pool = pool
        self.commission = commission
        self.batchSize = batchSize
        self.logger = logger
    }

    /// Sums what is marked, then looks again every `interval`, until cancelled. A failed pass is
    /// logged and tried again: reports stay right meanwhile (they correct for what is marked).
    public func run(every interval: Duration) async {
        while !Task.isCancelled {
            do {
                let summed = try await drain()
                if summed > 0 { logger.debug("subscriptions summed for the reports", metadata: ["subscriptions": "\(summed)"]) }
            } catch is CancellationError {
                return
            } catch {
                logger.warning("summing subscriptions for the reports failed; trying again", metadata: ["error": "\(LedgerServiceError.mapping(error))"])
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// Sums every subscription marked, a batch at a time, until none is; returns how many.
    /// `progress` gets the count so far and what was marked at the start.
    @discardableResult
    public func drain(progress: (@Sendable (Int, Int) -> Void)? = nil) async throws -> Int {
        // Looked at without the lock: an idle pass every second must not hold up the runner.
        let plan = commission.rawValue
        let (marked, planned): (Int, Bool) = try await pool.withConnection { connection in
            let row = try connection.query("""
                SELECT (SELECT count(*) FROM history_dirty), EXISTS (SELECT 1 FROM history_summary WHERE commission_plan = \(plan))
                """)[0]
            return (Int(try row.decode(0) as Int64), try row.decode(1))
        }
        guard marked > 0 || !planned else { return 0 }
        var summed = 0
        while !Task.isCancelled {
            let batch = try await pass()
            guard batch > 0 else { break }
            summed += batch
            progress?(summed, max(marked, summed))
        }
        return summed
    }

    /// One batch in one transaction; the number of subscriptions it took (0: none marked).
    func pass() async throws -> Int {
        let commission = commission
        let batchSize = batchSize
        let legacy = legacy
        return try await pool.withTransaction { connection in
            try ProjectionRunner.lockProjections(on: connection)
            try Self.sumAgainIfThePlanChanged(commission, on: connection)
            let originals: [String] = try connection.query("""
                SELECT original_transaction_id FROM history_dirty ORDER BY original_transaction_id LIMIT \(Int64(batchSize))
                """).map { try $0.decode(0) }
            guard !originals.isEmpty else { return 0 }
            let list = PostgresArray(originals.map { Optional($0) })
            var sums: [StoredContributions.Row: HistoryContributions.Figures] = [:]
            for row in try connection.query("""
                SELECT environment, bundle_id, intervals FROM history_subscriptions WHERE original_transaction_id = ANY(\(list))
                """) {
                let place = StoredContributions.Place(environment: try row.decode(0), bundleId: try row.decode(1))
                let life = try StoredIntervals.life(try row.decode(2))
                for (key, figures) in HistoryContributions.of(life) { sums[place.with(key), default: .init()] -= figures }
            }
            let histories = try SubscriptionHistories(
                environment: nil, bundleId: nil, originals: originals, commission: commission, legacyApp: try legacy.name(on: connection),
                on: connection)
            for (owner, life) in histories.lives {
                let place = StoredContributions.Place(environment: owner.environment, bundleId: owner.bundleId)
                for (key, figures) in HistoryContributions.of(life) { sums[place.with(key), default: .init()] += figures }
            }
            _ = try connection.execute("DELETE FROM history_subscriptions WHERE original_transaction_id = ANY(\(list))")
            if !histories.lives.isEmpty {
                _ = try connection.execute("""
                    INSERT INTO history_subscriptions (original_transaction_id, environment, bundle_id, intervals)
                    SELECT * FROM unnest(\(PostgresArray(histories.lives.map { Optional($0.life.originalTransactionId) }))::text[],
                                         \(PostgresArray(histories.lives.map { Optional($0.owner.environment) }))::text[],
                                         \(PostgresArray(histories.lives.map { Optional($0.owner.bundleId) }))::text[],
                                         \(PostgresArray(try histories.lives.map { Optional(try StoredIntervals.text($0.life)) }))::text[])
                    """)
            }
            try StoredContributions.add(sums.filter { !$0.value.isZero }, on: connection)
            _ = try connection.execute("DELETE FROM history_dirty WHERE original_transaction_id = ANY(\(list))")
            return originals.count
        }
    }

    /// Money summed under another plan is summed again from the start: every subscription is
    /// marked and the sums emptied, in the transaction of the first batch.
    static func sumAgainIfThePlanChanged(_ commission: CommissionPlan, on connection: Connection) throws {
        let stored: String? = try connection.query("SELECT commission_plan FROM history_summary").first?.decode(0)
        guard stored != commission.rawValue else { return }
        _ = try connection.execute("DELETE FROM history_contributions")
        _ = try connection.execute("DELETE FROM history_subscriptions")
        _ = try connection.execute("""
            INSERT INTO history_dirty (original_transaction_id)
            SELECT original_transaction_id FROM projection_entitlements WHERE kind = 'auto_renewable'
            ON CONFLICT DO NOTHING
            """)
        _ = try connection.execute("""
            INSERT INTO history_summary (commission_plan) VALUES (\(commission.rawValue))
            ON CONFLICT (only_row) DO UPDATE SET commission_plan = excluded.commission_plan
            """)
    }
}
