import Postgres
import Primitives

extension LedgerReads {
    /// The log's standing as `/metrics` reports it (docs/monitoring.md).
    public struct Standing: Sendable, Equatable {
        /// The last position the chain check (`ChainWatch`) verified from the first event.
        public var verifiedPosition: Int64
        /// Events after `verifiedPosition`: recorded, not verified yet.
        public var unverifiedEvents: Int64
        /// The chain check found an event that does not verify.
        public var chainBroken: Bool
        /// Submissions recorded longer than the retry worker's grace ago that nothing decided,
        /// not even as pending: the worker should have taken them over.
        public var undecidedPastGrace: Int64
        /// Milliseconds since the oldest receipt still waiting for Apple was submitted; 0 when
        /// none waits.
        public var oldestPendingMs: Int64
        /// Standbys the primary counts as synchronous (sync or quorum, streaming); nil when this
        /// session may not see them (it needs the privileges of `pg_read_all_stats`).
        public var synchronousStandbys: Int64?
        /// Subscriptions whose history changed and that the history summarizer has not summed
        /// yet (`history_dirty`): each report corrects the sums for them, and past
        /// `ReadModels.correctedAtMost` reads every history instead.
        public var historyUnsummed: Int64

        public init(
            verifiedPosition: Int64, unverifiedEvents: Int64, chainBroken: Bool, undecidedPastGrace: Int64, oldestPendingMs: Int64,
            synchronousStandbys: Int64?, historyUnsummed: Int64 = 0
        ) {
            self.verifiedPosition = verifiedPosition
            self.unverifiedEvents = unverifiedEvents
            self.chainBroken = chainBroken
            self.undecidedPastGrace = undecidedPastGrace
            self.oldestPendingMs = oldestPendingMs
            self.synchronousStandbys = synchronousStandbys
            self.historyUnsummed = historyUnsummed
        }
    }

    /// The standing, by the database's clock (as the retry worker tells abandoned submissions);
    /// `grace` is the retry worker's.
    public static func standing(on connection: Connection, grace: Duration) throws -> Standing {
        let graceMs = Millis.of(grace)
        let mark = WorkerMark.undecidedSubmissions.rawValue
        // The undecided scan starts at the worker's mark, on the submissions' index, as the
        // worker's does; the pending one walks the pending index, as pendingCount does.
        let row = try connection.query("""
            SELECT c.position, greatest(h.head - c.position, 0), c.broken,
                (SELECT count(*) FROM events o
                 WHERE o.event_type = 'ReceiptSubmitted'
                   AND o.position > coalesce((SELECT position FROM worker_checkpoints WHERE worker = \(mark)), 0)
                   AND o.recorded_at < now() - \(graceMs) * interval '1 millisecond'
                   AND NOT EXISTS (SELECT 1 FROM events n WHERE n.stream_id = o.stream_id AND n.stream_version = 2)),
                (SELECT coalesce(greatest(floor(extract(epoch FROM now() - min(s.recorded_at)) * 1000), 0), 0)::bigint
                 FROM events p JOIN events s ON s.stream_id = p.stream_id AND s.stream_version = 1
                 WHERE p.event_type = 'VerificationPending'
                   AND NOT EXISTS (SELECT 1 FROM events n WHERE n.stream_id = p.stream_id AND n.stream_version > p.stream_version)),
                CASE WHEN pg_has_role('pg_read_all_stats', 'USAGE') THEN
                    (SELECT count(*) FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum') AND state = 'streaming')
                END,
                (SELECT count(*) FROM history_dirty)
            FROM (SELECT coalesce(max(position), 0) AS head FROM events) h
            CROSS JOIN (
                SELECT coalesce(max(position), 0) AS position, bool_or(broken IS NOT NULL) IS TRUE AS broken FROM chain_checkpoint
            ) c
            """)[0]
        return Standing(
            verifiedPosition: try row.decode(0), unverifiedEvents: try row.decode(1), chainBroken: try row.decode(2),
            undecidedPastGrace: try row.decode(3), oldestPendingMs: try row.decode(4), synchronousStandbys: try row.decode(5),
            historyUnsummed: try row.decode(6))
    }
}
