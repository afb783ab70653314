import Postgres

/// Holds the projection runner back: a transaction holds `projection_app_balances` against writes,
/// so the runner cannot apply its next page, while reads of the table still go through. The
/// hold lasts until `release()` writes a release row (each statement of the holder's loop sees
/// others' commits), or fails after 60 s, so a failing test cannot leave it held.
struct ProjectionHold {
    let ledger: LedgerHarness
    let holder: Task<Void, any Error>

    static func start(on ledger: LedgerHarness) async throws -> ProjectionHold {
        try await ledger.pool.withConnection { _ = try $0.execute("CREATE TABLE IF NOT EXISTS test_release (released boolean)") }
        let pool = ledger.pool
        let holder = Task {
            try await pool.withTransaction { connection in
                _ = try connection.execute("LOCK TABLE projection_app_balances IN EXCLUSIVE MODE")
                try connection.executeScript(unsafeSQL: """
                    DO $$
                    DECLARE deadline timestamptz := clock_timestamp() + interval '60 seconds';
                    BEGIN
                        WHILE NOT EXISTS (SELECT 1 FROM test_release) LOOP
                            IF clock_timestamp() > deadline THEN RAISE EXCEPTION 'never released'; END IF;
                            PERFORM pg_sleep(0.01);
                        END LOOP;
                    END $$
                    """)
            }
        }
        try await ledger.eventually("the balances table is locked") {
            try await ledger.pool.withConnection { connection in
                try connection.query("""
                    SELECT count(*) FROM pg_locks
                    WHERE relation = 'projection_app_balances'::regclass AND mode = 'ExclusiveLock' AND granted
                    """)[0].decode(0, as: Int64.self) == 1
            }
        }
        return ProjectionHold(ledger: ledger, holder: holder)
    }

    func release() async throws {
        try await ledger.pool.withConnection { _ = try $0.execute("INSERT INTO test_release VALUES (true)") }
        try await holder.value
        try await ledger.pool.withConnection { _ = try $0.execute("DELETE FROM test_release") }
    }
}
