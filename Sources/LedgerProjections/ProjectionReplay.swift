import AppStore
import EventStore
import Foundation
import Ledger
import LedgerStore
import Logging
import Postgres

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

    public init(conninfo: String, projections: [any Projection] = Projections.all, pageSize: Int = 1_000, clock: WallClock, logger: Logger) {
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
        let setTables = try await createShadow(live: live, shadow: shadow, on: admin)
        let shadowConninfo = try Conninfo.addingOptions("-c search_path=\(shadow),\(live)", to: conninfo)
        let groups = Self.writerGroups(projections)
        // One connection per group writing, one reading the next page.
        let pool = ConnectionPool(conninfo: shadowConninfo, maxConnections: groups.count + 1, logger: logger)
        do {
            let runner = ProjectionRunner(
                store: EventStore(pool: pool, logger: logger), conninfo: shadowConninfo, groups: groups, pageSize: pageSize, logger: logger)
            try await runner.catchUp(progress: progress, verifyingChain: false)
            try await key(setTables, shadow: shadow, on: admin)
            let rebuilt = ContinuousClock.now - started
            let comparison = ReplayComparison(live: live, shadow: shadow, now: clock())
            let changes = try await comparison.changes(admin: admin, livePool: admin, shadowPool: pool)
            let events = runner.appliedPosition
            if !dryRun {
                try await swap(live: live, shadow: shadow, on: pool)
            }
            let checksums = try await ReplayComparison.checksums(
                of: dryRun ? shadow : live, tables: tables.filter { $0 != "projection_checkpoints" }, on: admin)
            await pool.close()
            try await admin.withConnection { try $0.execute("DROP SCHEMA IF EXISTS \(identifier: shadow) CASCADE") }
            return ReplayReport(
                events: events, rebuilt: rebuilt, elapsed: ContinuousClock.now - started, checksums: checksums, changes: changes, swapped: !dryRun)
        } catch {
            await pool.close()
            _ = try? await admin.withConnection { try $0.execute("DROP SCHEMA IF EXISTS \(identifier: shadow) CASCADE") }
            throw error
        }
    }

    /// The rebuild writes revenue on a connection of its own, beside the other projections: its
    /// statements (one per sale, each rating the sale against the subscription's earlier ones)
    /// are a large part of a rebuild's writes, and one backend writing everything leaves the
    /// machine partly idle (BENCHMARKS.md, 'Why the code is shaped so'). The shadow schema has no
    /// other runner, as `ProjectionRunner`'s concurrent groups require.
    static func writerGroups(_ projections: [any Projection]) -> [[any Projection]] {
        let alone = [RevenueProjection().name, TimelineProjection().name, WebhookEventsProjection().name]
        return (alone.map { name in projections.filter { $0.name == name } } + [projections.filter { !alone.contains($0.name) }])
            .filter { !$0.isEmpty }
    }

    /// Empty copies of the projection tables (columns, keys, indexes), with the live tables'
    /// grants; the projections' set tables without their indexes. Returns those tables' keys,
    /// for `key(_:shadow:on:)` to build at the end.
    private func createShadow(live: String, shadow: String, on admin: ConnectionPool) async throws -> [SetTableKeys] {
        let tables = tables
        let setTableNames = projections.flatMap(\.setTables)
        return try await admin.withTransaction { connection in
            // Read first: a table that is not a set is refused before any rebuilding.
            let setTables = try setTableNames.map { try SetTableKeys(of: $0, in: live, on: connection) }
            // A replay that died earlier may have left its schema.
            try connection.execute("DROP SCHEMA IF EXISTS \(identifier: shadow) CASCADE")
            try connection.execute("CREATE SCHEMA \(identifier: shadow)")
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

    /// The set tables, filled without indexes, get the live tables' keys: repeated rows (what
    /// `ON CONFLICT DO NOTHING` skipped in the live tables, as a row is its key) are dropped, then
    /// each key is built in one sorted pass instead of one index entry per insert.
    private func key(_ setTables: [SetTableKeys], shadow: String, on admin: ConnectionPool) async throws {
        guard !setTables.isEmpty else { return }
        // Keying a large log takes a while after the progress bar has reached the head, so say
        // what runs (BENCHMARKS.md, 'Why the code is shaped so').
        logger.info("rebuilt up to the head; keying the set tables", metadata: ["tables": "\(setTables.map(\.table).joined(separator: ", "))"])
        try await admin.withTransaction { connection in
            for set in setTables {
                try connection.execute("""
                    DELETE FROM \(identifier: shadow).\(identifier: set.table) AS t USING (
                        SELECT ctid FROM (SELECT ctid, row_number() OVER (PARTITION BY \(unsafeRaw: set.columns)) AS n
                                          FROM \(identifier: shadow).\(identifier: set.table)) AS numbered
                        WHERE n > 1) AS repeated
                    WHERE t.ctid = repeated.ctid
                    """)
                for key in set.keys {
                    try connection.execute("""
                        ALTER TABLE \(identifier: shadow).\(identifier: set.table) ADD CONSTRAINT \(identifier: key.name) \(unsafeRaw: key.definition)
                        """)
                }
            }
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
                try connection.execute("DROP TABLE \(identifier: live).\(identifier: table)")
                try connection.execute("ALTER TABLE \(identifier: shadow).\(identifier: table) SET SCHEMA \(identifier: live)")
            }
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
}

/// A set table's shape as the live schema defines it: its columns (quoted, in order) and its
/// keys (name and definition, as `pg_get_constraintdef` gives them).
struct SetTableKeys: Sendable {
    var table: String
    var columns: String
    var keys: [(name: String, definition: String)]

    /// Reads `table` of `schema`; throws when it has an index that is not a key (it would be
    /// lost) or no key at all (nothing would drop repeats after the swap).
    init(of table: String, in schema: String, on connection: Connection) throws {
        // Quoted for regclass's own parsing (a schema name may need quotes).
        guard let quotedSchema = SQL.quoteIdentifier(schema), let quotedTable = SQL.quoteIdentifier(table) else {
            throw LedgerServiceError(.invalidConfiguration, "a schema or table name holds a NUL byte")
        }
        let qualified = quotedSchema + "." + quotedTable
        self.table = table
        columns = try connection.query("""
            SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute
            WHERE attrelid = \(qualified)::regclass AND attnum > 0 AND NOT attisdropped
            """)[0].decode(0)
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
