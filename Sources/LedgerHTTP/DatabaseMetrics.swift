import LedgerStore
import Postgres

/// The database's standing in `/metrics` (docs/monitoring.md): whether PostgreSQL answers, the
/// chain check, submissions nothing decided, receipts waiting for Apple, the subscriptions the
/// finance reports' sums do not hold yet and the synchronous standbys. Read at scrape time in
/// one statement (`LedgerReads.standing`, where the log's
/// questions live), as the webhook endpoints are (`WebhookMetrics`), so every server of a
/// deployment reports the same, and written as Prometheus text beside the registry's exposition.
enum DatabaseMetrics {
    /// What one scrape read (`LedgerReads.Standing`).
    typealias Status = LedgerReads.Standing

    /// The lines for a scrape, read on a connection of `pool`; `grace` is the retry worker's.
    /// When the database does not answer, `ledger_database_up 0` alone.
    static func scrape(_ pool: ConnectionPool, grace: Duration) async -> String {
        text(try? await pool.withConnection { try LedgerReads.standing(on: $0, grace: grace) })
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
        out += family(
            "ledger_history_unsummed_subscriptions",
            "Subscriptions whose history changed that the finance reports' sums do not hold yet (reports correct for them as they read).",
            String(status.historyUnsummed))
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
