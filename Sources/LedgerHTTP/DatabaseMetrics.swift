import AppStore
import LedgerStore
import Postgres

/// The database's standing in `/metrics` (docs/monitoring.md): whether PostgreSQL answers, the
/// chain check, submissions nothing decided, receipts waiting for Apple and the synchronous
/// standbys. Read at scrape time in one statement, as the webhook endpoints are
/// (`WebhookMetrics`), so every server of a deployment reports the same, and written as
/// Prometheus text beside the registry's exposition.
enum DatabaseMetrics {
    /// What one scrape read.
    struct Status: Sendable, Equatable {
        /// The last position the chain check (`ChainWatch`) verified from the first event.
        var verifiedPosition: Int64
        /// Events after `verifiedPosition`: recorded, not verified yet.
        var unverifiedEvents: Int64
        /// The chain check found an event that does not verify.
        var chainBroken: Bool
        /// Submissions recorded longer than the retry worker's grace ago that nothing decided,
        /// not even as pending: the worker should have taken them over.
        var undecidedPastGrace: Int64
        /// Milliseconds since the oldest receipt still waiting for Apple was submitted; 0 when
        /// none waits.
        var oldestPendingMs: Int64
        /// Standbys the primary counts as synchronous (sync or quorum, streaming); nil when this
        /// session may not see them (it needs the privileges of `pg_read_all_stats`).
        var synchronousStandbys: Int64?
    }

    /// The lines for a scrape, read on a connection of `pool`; `grace` is the retry worker's.
    /// When the database does not answer, `ledger_database_up 0` alone.
    static func scrape(_ pool: ConnectionPool, grace: Duration) async -> String {
        text(try? await pool.withConnection { try read(on: $0, grace: grace) })
    }

    /// The status, by the database's clock (as the retry worker tells abandoned submissions).
    static func read(on connection: Connection, grace: Duration) throws -> Status {
        let graceMs = Millis.of(grace)
        let mark = LedgerReads.WorkerMark.undecidedSubmissions.rawValue
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
                END
            FROM (SELECT coalesce(max(position), 0) AS head FROM events) h
            CROSS JOIN (
                SELECT coalesce(max(position), 0) AS position, bool_or(broken IS NOT NULL) IS TRUE AS broken FROM chain_checkpoint
            ) c
            """)[0]
        return Status(
            verifiedPosition: try row.decode(0), unverifiedEvents: try row.decode(1), chainBroken: try row.decode(2),
            undecidedPastGrace: try row.decode(3), oldestPendingMs: try row.decode(4), synchronousStandbys: try row.decode(5))
    }

    /// Prometheus text (format 0.0.4) for `status`, nil when the database did not answer: then
    /// only `ledger_database_up 0`, and the other series go missing rather than stand still.
    static func text(_ status: Status?) -> String {
        var out = family("ledger_database_up", "Whether PostgreSQL answered this scrape's queries: 1 yes, 0 no.", status == nil ? "0" : "1")
        guard let status else { return out }
        out += family(
            "ledger_chain_verified_position", "The last position the chain check verified from the first event.",
            String(status.verifiedPosition))
        out += family(
            "ledger_chain_unverified_events", "Events recorded after the chain check's verified position.", String(status.unverifiedEvents))
        out += family(
            "ledger_chain_broken", "1 when the chain check found an event that does not verify (run purchase-ledger verify), else 0.",
            status.chainBroken ? "1" : "0")
        out += family(
            "ledger_undecided_submissions_past_grace",
            "Submissions recorded longer than the retry worker's grace ago that nothing decided, not even as pending.",
            String(status.undecidedPastGrace))
        out += family(
            "ledger_pending_receipts_oldest_seconds", "How long ago the oldest receipt still waiting for Apple was submitted; 0 when none waits.",
            WebhookMetrics.seconds(status.oldestPendingMs))
        if let standbys = status.synchronousStandbys {
            out += family(
                "ledger_database_synchronous_standbys", "Standbys PostgreSQL counts as synchronous (sync or quorum) and streaming.",
                String(standbys))
        }
        return out
    }

    private static func family(_ name: String, _ help: String, _ value: String) -> String {
        "# HELP \(name) \(help)\n# TYPE \(name) gauge\n\(name) \(value)\n"
    }
}
