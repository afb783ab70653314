import AppStore
import EventStore
import Foundation
import Ledger
import LedgerStore
import Logging
import Postgres
import Primitives
import Sealing

/// Rebuilds every projection from the first event into tables beside the live ones (a schema
/// of their own, `<schema>_replay`, whose connections see the live `events` through the search
/// path), catches up to the head, and swaps them in, in one transaction, under the projections'
/// lock, while servers keep serving the old tables until that commit. A dry run builds, compares
/// and drops. Runs as the database owner (it creates and moves tables; events stay untouched).
public final class ProjectionReplay: Sendable {
    let conninfo: String
    let projections: [any Projection]
    let pageSize: Int
    /// The ledger's now, for the subscription statuses the comparison shows (old → new).
    let clock: WallClock
    let logger: Logger
    /// Opens the handles in the lines of what changed, so they name the users (docs/erasure.md).
    let keyEncryptionKey: KeyEncryptionKey?

    /// Events per page read from the log and applied per transaction.
    public static let defaultPageSize = 1_000

    public init(
        conninfo: String, projections: [any Projection] = Projections.all, pageSize: Int = defaultPageSize, clock: WallClock,
        keyEncryptionKey: KeyEncryptionKey? = nil, logger: Logger
    ) {
        self.keyEncryptionKey = keyEncryptionKey
        self.conninfo = conninfo
        self.projections = projections
        self.pageSize = pageSize
        self.clock = clock
        self.logger = logger
    }

    /// The projection tables and the checkpoints that say how far they got.
    var tables: [String] { ["projection_checkpoints"] + projections.flatMap(\.tables) }

    public func run(dryRun: Bool, progress: (@Sendable (Int64, Int64) -> Void)? = nil) async throws -> ReplayReport {
        // Its DROP ... IF EXISTS and CASCADE notices are expected: not worth a log line.
        let admin = ConnectionPool(
            conninfo: try Conninfo.addingOptions("-c client_min_messages=warning", to: conninfo), maxConnections: 1, logger: logger)
        do {
            let report = try await run(dryRun: dryRun, progress: progress, admin: admin)
            await admin.close()
            return report
        } catch {
            await admin.close()
            throw error
        }
    }

    private func run(dryRun: Bool, progress: (@Sendable (Int64, Int64) -> Void)?, admin: ConnectionPool) async throws -> ReplayReport {
        let started = ContinuousClock.now
        let live: String = try await admin.withConnection { try $0.query("SELECT current_schema()::text")[0].decode(0) }
        let shadow = live + "_replay"
        let mark = try await fingerprint(live: live, on: admin)
        let left = try await leftRebuild(shadow: shadow, fingerprint: mark, on: admin)
        let setTables: [SetTableKeys]
        if let left {
            // An earlier run of this code on these tables stopped (a crash, a kill, a lost
            // connection): its pages are committed with their checkpoints, so it goes on from them.
            let setTableNames = projections.flatMap(\.setTables)
            setTables = try await admin.withConnection { connection in
                try setTableNames.map { try SetTableKeys(of: $0, in: live, on: connection) }
            }
            logger.notice("resuming the rebuild an earlier run left", metadata: ["schema": "\(shadow)", "position": "\(left.position)"])
        } else {
            setTables = try await createShadow(live: live, shadow: shadow, fingerprint: mark, on: admin)
        }
        let shadowConninfo = try Conninfo.addingOptions("-c search_path=\(shadow),\(live)", to: conninfo)
        let groups = Self.writerGroups(projections)
        // One connection per group writing, one reading the next page.
        let pool = ConnectionPool(conninfo: shadowConninfo, maxConnections: groups.count + 1, logger: logger)
        do {
            let runner = ProjectionRunner(
                store: EventStore(pool: pool, logger: logger), conninfo: shadowConninfo, groups: groups, pageSize: pageSize,
                copyingRows: left?.keyed != true, logger: logger)
            try await runner.catchUp(progress: progress, verifyingChain: false)
            if left?.keyed != true { try await key(setTables, shadow: shadow, fingerprint: mark, on: pool) }
            let rebuilt = ContinuousClock.now - started
            let comparison = ReplayComparison(live: live, shadow: shadow, now: clock())
            var changes = try await comparison.changes(admin: admin, livePool: admin, shadowPool: pool)
            do {
                let people = People(subjects: SubjectStore(pool: admin, keyEncryptionKey: keyEncryptionKey))
                // One pass over all the lines: one read of the keys, not one per line.
                changes = try await people.open(changes.map { Array($0.utf8) }, escaping: .none).map { String(decoding: $0, as: UTF8.self) }
            } catch {
                // The lines keep their handles: what changed is still told, if not whose.
                logger.warning("the users in what changed could not be shown", metadata: ["error": "\(LedgerServiceError.mapping(error))"])
            }
            let events = runner.appliedPosition
            if !dryRun {
                try await swap(live: live, shadow: shadow, on: pool)
            }
            let checksums = try await ReplayComparison.checksums(
                of: dryRun ? shadow : live, tables: tables.filter { $0 != "projection_checkpoints" }, on: admin)
            await pool.close()
            try await admin.withConnection { try $0.execute("DROP SCHEMA IF EXISTS \(identifier: shadow) CASCADE") }
            return ReplayReport(
                events: events, rebuilt: rebuilt, elapsed: ContinuousClock.now - started, checksums: checksums, changes: changes, swapped: !dryRun,
                resumedFrom: left?.position)
        } catch {
            await pool.close()
            // Kept, so that running the replay again goes on from its last committed pages
            // instead of starting over; a run of other code or on other tables drops it.
            logger.notice("the rebuild stopped; its tables are kept for the next replay to resume", metadata: [
                "schema": "\(shadow)", "error": "\(LedgerServiceError.mapping(error))",
            ])
            throw error
        }
    }

    /// What a rebuild's schema is marked with (its comment), so that only a run of the same
    /// projections (names and versions) on tables of the same columns resumes it.
    private func fingerprint(live: String, on admin: ConnectionPool) async throws -> String {
        let tables = PostgresArray(tables.map { Optional($0) })
        let columns: String = try await admin.withConnection { connection in
            try connection.query("""
                SELECT coalesce(md5(string_agg(c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ','
                                               ORDER BY c.relname, a.attnum)), '')
                FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = \(live) AND c.relname = ANY(\(tables)) AND a.attnum > 0 AND NOT a.attisdropped
                """)[0].decode(0)
        }
        let code = projections.map { "\($0.name):\($0.version)" }.joined(separator: ",")
        return "purchase-ledger rebuild of \(code); columns \(columns)"
    }

    private static func literal(_ text: String) throws -> String {
        guard let quoted = SQL.quoteLiteral(text) else {
            throw LedgerServiceError(.invalidConfiguration, "a projection or table name holds a NUL byte")
        }
        return quoted
    }

    /// The rebuild an earlier run left in `shadow` with the same fingerprint: how far its
    /// projections got, and whether its set tables were keyed. Nil when there is none.
    private func leftRebuild(shadow: String, fingerprint: String, on admin: ConnectionPool) async throws -> (position: Int64, keyed: Bool)? {
        let tables = tables
        return try await admin.withConnection { connection -> (position: Int64, keyed: Bool)? in
            guard let comment: String = try connection.query("""
                SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = \(shadow)
                """).first?.decode(0) else { return nil }
            let keyed = comment == fingerprint + "; keyed"
            guard keyed || comment == fingerprint + "; building" else { return nil }
            let present: Int64 = try connection.query("""
                SELECT count(*) FROM pg_tables WHERE schemaname = \(shadow) AND tablename = ANY(\(PostgresArray(tables.map { Optional($0) })))
                """)[0].decode(0)
            guard present == Int64(tables.count) else { return nil }
            let position: Int64 = try connection.query(
                "SELECT coalesce(min(position), 0) FROM \(identifier: shadow).projection_checkpoints")[0].decode(0)
            return (position, keyed)
        }
    }

    /// The rebuild writes revenue on a connection of its own, beside the other projections: its
    /// statements (one per sale, each rating the sale against the subscription's earlier ones)
    /// are a large part of a rebuild's writes, and one backend writing everything leaves the
    /// machine partly idle (docs/benchmarks.md, 'Why the code is shaped so'). The shadow schema has no
    /// other runner, as `ProjectionRunner`'s concurrent groups require.
    static func writerGroups(_ projections: [any Projection]) -> [[any Projection]] {
        let alone = [RevenueProjection().name, TimelineProjection().name, WebhookEventsProjection().name]
        return (alone.map { name in projections.filter { $0.name == name } } + [projections.filter { !alone.contains($0.name) }])
            .filter { !$0.isEmpty }
    }

    /// Empty copies of the projection tables (columns, keys, indexes), with the live tables'
    /// grants; the projections' set tables without their indexes. Returns those tables' keys,
    /// for `key(_:shadow:on:)` to build at the end.
    private func createShadow(live: String, shadow: String, fingerprint: String, on admin: ConnectionPool) async throws -> [SetTableKeys] {
        let tables = tables
        let setTableNames = projections.flatMap(\.setTables)
        return try await admin.withTransaction { connection in
            // Read first: a table that is not a set is refused before any rebuilding.
            let setTables = try setTableNames.map { try SetTableKeys(of: $0, in: live, on: connection) }
            // A replay that died earlier may have left its schema.
            try connection.execute("DROP SCHEMA IF EXISTS \(identifier: shadow) CASCADE")
            try connection.execute("CREATE SCHEMA \(identifier: shadow)")
            try connection.execute("COMMENT ON SCHEMA \(identifier: shadow) IS \(unsafeRaw: try Self.literal(fingerprint + "; building"))")
            try connection.execute("GRANT USAGE ON SCHEMA \(identifier: shadow) TO ledger_app")
            for table in tables {
                if setTableNames.contains(table) {
                    try connection.execute("""
                        CREATE TABLE \(identifier: shadow).\(identifier: table) (LIKE \(identifier: live).\(identifier: table) INCLUDING ALL EXCLUDING INDEXES)
                        """)
                } else {
                    try connection.execute("CREATE TABLE \(identifier: shadow).\(identifier: table) (LIKE \(identifier: live).\(identifier: table) INCLUDING ALL)")
                }
                try connection.execute("REVOKE ALL ON \(identifier: shadow).\(identifier: table) FROM PUBLIC")
                try connection.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON \(identifier: shadow).\(identifier: table) TO ledger_app")
                let owned: Bool = try connection.query("SELECT pg_has_role(current_user, 'ledger_owner', 'MEMBER')")[0].decode(0)
                if owned { try connection.execute("ALTER TABLE \(identifier: shadow).\(identifier: table) OWNER TO ledger_owner") }
            }
            return setTables
        }
    }

    /// The set tables, filled without indexes, get the live tables' keys, each built in one
    /// sorted pass instead of one index entry per insert, after repeated rows (what `ON CONFLICT
    /// DO NOTHING` skipped in the live tables, as a row is its key) are dropped. Tables are keyed concurrently, each on its own
    /// connection, with room to sort in memory: keying runs after every group has reached the
    /// head, and one connection left the other core idle for 5.8 s of a 41 s rebuild
    /// (pg_stat_statements, docs/benchmarks.md 2026-11-26 night).
    private func key(_ setTables: [SetTableKeys], shadow: String, fingerprint: String, on pool: ConnectionPool) async throws {
        // Keying a large log takes a while after the progress bar has reached the head, so say
        // what runs (docs/benchmarks.md, 'Why the code is shaped so').
        logger.info("rebuilt up to the head; keying the set tables", metadata: ["tables": "\(setTables.map(\.table).joined(separator: ", "))"])
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            for set in setTables {
                tasks.addTask { try await pool.withTransaction { try Self.key(set, shadow: shadow, on: $0) } }
            }
            try await tasks.waitForAll()
        }
        // Marked once every table is keyed: a run that stops before goes on from the pages and
        // keys what is not keyed yet.
        try await pool.withConnection { connection in
            try connection.execute("COMMENT ON SCHEMA \(identifier: shadow) IS \(unsafeRaw: try Self.literal(fingerprint + "; keyed"))")
        }
    }

    /// Keys one set table inside the caller's transaction; a key an interrupted run already
    /// added is left as it is.
    private static func key(_ set: SetTableKeys, shadow: String, on connection: Connection) throws {
        // For this transaction only: the sorts of the key and of the repeats stay in memory.
        _ = try connection.query("SELECT set_config('maintenance_work_mem', '256MB', true), set_config('work_mem', '256MB', true)")
        let table = try SetTableKeys.qualified(shadow, set.table)
        let existing = try Set(connection.query("""
            SELECT conname::text FROM pg_constraint WHERE conrelid = \(table)::regclass
            """).map { try $0.decode(0) as String })
        let keys = set.keys.filter { !existing.contains($0.name) }
        guard !keys.isEmpty else { return }
        // Repeats are found by hashing (the few repeated rows grouped, then joined back), not by
        // sorting the table: a window sort under the database's collation took 2.2 s at
        // 1,000,000 events for a table that had no repeats. A row holding a NULL is no repeat,
        // as a unique key would not have refused it either.
        let same = set.columnNames.map { "t.\($0) = r.\($0)" }.joined(separator: " AND ")
        try connection.execute("""
            DELETE FROM \(unsafeRaw: table) AS t USING (
                SELECT min(ctid) AS kept, \(unsafeRaw: set.columns) FROM \(unsafeRaw: table)
                GROUP BY \(unsafeRaw: set.columns) HAVING count(*) > 1) AS r
            WHERE \(unsafeRaw: same) AND t.ctid <> r.kept
            """)
        for key in keys {
            try connection.execute("""
                ALTER TABLE \(identifier: shadow).\(identifier: set.table) ADD CONSTRAINT \(identifier: key.name) \(unsafeRaw: key.definition)
                """)
        }
    }

    /// Under the live schema's projection lock (so its runners wait): applies what was appended
    /// since the build, then replaces each live table by its rebuilt one. Readers see the old
    /// tables until the commit and the new ones after, never an empty or partial one.
    private func swap(live: String, shadow: String, on pool: ConnectionPool) async throws {
        let projections = projections
        let tables = tables
        let pageSize = pageSize
        let store = EventStore(pool: pool, logger: logger)
        try await pool.withTransaction { connection in
            try ProjectionRunner.lock(connection, schema: live)
            while true {
                let from: Int64 = try connection.query("SELECT coalesce(min(position), 0) FROM projection_checkpoints")[0].decode(0)
                let page = try store.events(after: from, limit: pageSize, on: connection)
                if try ProjectionRunner.apply(page, projections: projections, on: connection) == nil { break }
            }
            for table in tables {
                // A rebuilt table was made by `LIKE`, which copies no trigger: the live table's
                // are made again on it, by their own definitions (the same names, in the same schema).
                let triggers: [String] = try connection.query("""
                    SELECT pg_get_triggerdef(oid) FROM pg_trigger
                    WHERE tgrelid = \(try SetTableKeys.qualified(live, table))::regclass AND NOT tgisinternal ORDER BY tgname
                    """).map { try $0.decode(0) }
                try connection.execute("DROP TABLE \(identifier: live).\(identifier: table)")
                try connection.execute("ALTER TABLE \(identifier: shadow).\(identifier: table) SET SCHEMA \(identifier: live)")
                for trigger in triggers { try connection.execute(SQL(unsafeSQL: trigger)) }
            }
            // The rows came in without firing those triggers: every subscription is marked for the
            // finance reports' sums (migration 0035) to be made again from the rebuilt rows.
            try connection.execute("""
                INSERT INTO \(identifier: live).history_dirty (original_transaction_id)
                SELECT original_transaction_id FROM \(identifier: live).projection_entitlements WHERE kind = 'auto_renewable'
                UNION SELECT original_transaction_id FROM \(identifier: live).history_subscriptions
                ON CONFLICT DO NOTHING
                """)
        }
    }
}

/// What a replay did and found.
public struct ReplayReport: Sendable {
    /// The position the rebuilt projections reached before the swap.
    public var events: Int64
    /// From the start to every projection rebuilt up to the head it saw.
    public var rebuilt: Duration
    /// The whole run: rebuilt, compared, swapped (unless a dry run), checksummed.
    public var elapsed: Duration
    /// Per table (checkpoints aside): rows and an order-independent md5 of their text, equal
    /// for two rebuilds of the same events.
    public var checksums: [(table: String, rows: Int64, md5: String)]
    /// What differs between the live projections and the rebuilt ones, one line each.
    public var changes: [String]
    public var swapped: Bool
    /// The position an earlier, interrupted run of the rebuild had reached, when this run went
    /// on from it; nil when it started from the first event.
    public var resumedFrom: Int64?
}

/// A set table's shape as the live schema defines it: its columns (quoted, in order) and its
/// keys (name and definition, as `pg_get_constraintdef` gives them).
struct SetTableKeys: Sendable {
    /// `schema.table` quoted for regclass's own parsing (a schema name may need quotes).
    static func qualified(_ schema: String, _ table: String) throws -> String {
        guard let schema = SQL.quoteIdentifier(schema), let table = SQL.quoteIdentifier(table) else {
            throw LedgerServiceError(.invalidConfiguration, "a schema or table name holds a NUL byte")
        }
        return schema + "." + table
    }

    var table: String
    /// Its columns, quoted, in order; and the same joined by commas.
    var columnNames: [String]
    var columns: String
    var keys: [(name: String, definition: String)]

    /// Reads `table` of `schema`; throws when it has an index that is not a key (it would be
    /// lost) or no key at all (nothing would drop repeats after the swap).
    init(of table: String, in schema: String, on connection: Connection) throws {
        let qualified = try Self.qualified(schema, table)
        self.table = table
        columnNames = try connection.query("""
            SELECT quote_ident(attname) FROM pg_attribute
            WHERE attrelid = \(qualified)::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum
            """).map { try $0.decode(0) as String }
        columns = columnNames.joined(separator: ", ")
        keys = try connection.query("""
            SELECT conname::text, pg_get_constraintdef(oid) FROM pg_constraint
            WHERE conrelid = \(qualified)::regclass AND contype IN ('p', 'u') ORDER BY conname
            """).map { (name: try $0.decode(0) as String, definition: try $0.decode(1) as String) }
        let indexes: Int64 = try connection.query("SELECT count(*) FROM pg_index WHERE indrelid = \(qualified)::regclass")[0].decode(0)
        guard !keys.isEmpty, indexes == Int64(keys.count) else {
            throw LedgerServiceError(.invalidConfiguration, "\(table) is declared a set table but its indexes are not exactly its keys")
        }
    }
}
