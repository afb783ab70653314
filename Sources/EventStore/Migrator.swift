import Crypto
import Foundation
import Logging
import Postgres
import Primitives

/// Applies numbered SQL files in order, in the schema first on the connection's search_path.
/// Each applied file is recorded with its sha256; a recorded file whose text changed since is
/// refused. All pending files apply in one transaction under an advisory lock, so two processes
/// migrating at once leave one applied set.
///
/// It applies the files it is given and knows none of them: the ledger's (`Schema/migrations`,
/// the log's tables and every projection's) come from `LedgerSchema` through
/// `Migrator.ledger()` in LedgerStore, so the log does not carry the read models' schema.
public struct Migrator: Sendable {
    public struct Migration: Sendable, Hashable {
        public var version: Int
        public var name: String
        public var sql: String
        public var checksum: String
    }

    /// What `migrate` did.
    public struct Report: Sendable, Hashable {
        public var applied: [String]
        public var alreadyApplied: Int
    }

    public let migrations: [Migration]

    /// Loads `NNNN_name.sql` files from `directory`.
    public init(directory: URL) throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".sql") }
        var migrations: [Migration] = []
        for file in files {
            guard let version = Int(file.prefix { $0.isNumber }), file.first?.isNumber == true else {
                throw MigrationError("\(file) does not start with its number")
            }
            let data = try Data(contentsOf: directory.appendingPathComponent(file))
            let checksum = Hex.encode(SHA256.hash(data: data))
            migrations.append(Migration(version: version, name: file, sql: String(decoding: data, as: UTF8.self), checksum: checksum))
        }
        migrations.sort { $0.version < $1.version }
        for (earlier, later) in zip(migrations, migrations.dropFirst()) where earlier.version == later.version {
            throw MigrationError("\(earlier.name) and \(later.name) have the same number")
        }
        self.migrations = migrations
    }

    public init(migrations: [Migration]) {
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    /// Applies what is pending; safe to run again and from several processes at once.
    @discardableResult
    public func migrate(pool: ConnectionPool, logger: Logger) async throws -> Report {
        let migrations = self.migrations
        return try await pool.withTransaction { connection in
            let schema: String? = try connection.query("SELECT current_schema()")[0].decode(0)
            guard schema != nil else {
                throw MigrationError("no schema of the search_path exists: create it first")
            }
            // Held until this transaction ends; a second migrator waits here, then finds
            // everything applied.
            try connection.execute("SELECT pg_advisory_xact_lock(1279610183, hashtext(current_schema()))")
            // "already exists, skipping" notices on every run after the first are not news.
            try connection.execute("SET LOCAL client_min_messages = warning")
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version    integer     PRIMARY KEY,
                    name       text        NOT NULL,
                    checksum   text        NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now())
                """)
            var applied: [Int: String] = [:]
            for row in try connection.query("SELECT version, checksum FROM schema_migrations") {
                applied[Int(try row.decode(0, as: Int32.self))] = try row.decode(1)
            }
            var report = Report(applied: [], alreadyApplied: 0)
            for migration in migrations {
                if let checksum = applied[migration.version] {
                    guard checksum == migration.checksum else {
                        throw MigrationError("\(migration.name) was edited after it was applied: add a new migration instead")
                    }
                    report.alreadyApplied += 1
                    continue
                }
                try connection.executeScript(unsafeSQL: migration.sql)
                try connection.execute("""
                    INSERT INTO schema_migrations (version, name, checksum)
                    VALUES (\(Int32(migration.version)), \(migration.name), \(migration.checksum))
                    """)
                logger.info("applied migration", metadata: ["migration": "\(migration.name)"])
                report.applied.append(migration.name)
            }
            return report
        }
    }
}

extension Migrator {
    /// The names of the migrations this build knows that the database has not applied, in
    /// order: `serve` refuses to start until they are (`purchase-ledger migrate`). Migrations
    /// the database has and this build does not know are no obstacle: a newer release migrated
    /// it, and migrations only add, so an older server keeps serving during a rolling upgrade.
    public func pending(pool: ConnectionPool) async throws -> [String] {
        let migrations = self.migrations
        return try await pool.withConnection { connection in
            let exists: Bool = try connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL")[0].decode(0)
            guard exists else { return migrations.map(\.name) }
            var applied = Set<Int>()
            for row in try connection.query("SELECT version FROM schema_migrations") {
                applied.insert(Int(try row.decode(0, as: Int32.self)))
            }
            return migrations.filter { !applied.contains($0.version) }.map(\.name)
        }
    }
}

/// A migration that cannot be applied; the message names the file.
public struct MigrationError: Error, Sendable, CustomStringConvertible {
    public var description: String
    /// Public so that whoever hands the migrations in (`Migrator.ledger()`) can say why it has none.
    public init(_ description: String) { self.description = description }
}
