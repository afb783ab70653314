import EventStore
import Foundation
import Postgres
import TestSupport
import Testing

@Suite("Migrations")
struct MigratorTests {
    @Test("migrating twice, and from several tasks at once, leaves one applied set")
    func idempotentMigrations() async throws {
        try await TestDatabase.withSchema { conninfo, pool in
            let migrator = try StoreFixture.migrator()
            let reports = try await withThrowingTaskGroup(of: Migrator.Report.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        let own = ConnectionPool(conninfo: conninfo, maxConnections: 1, logger: StoreFixture.logger)
                        defer { Task { await own.close() } }
                        return try await migrator.migrate(pool: own, logger: StoreFixture.logger)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(reports.filter { !$0.applied.isEmpty }.count == 1)
            let again = try await migrator.migrate(pool: pool, logger: StoreFixture.logger)
            #expect(again.applied.isEmpty)
            #expect(again.alreadyApplied == migrator.migrations.count)
            let recorded = try await pool.withConnection { connection in
                try connection.query("SELECT name FROM schema_migrations ORDER BY version").map { try $0.decode(0, as: String.self) }
            }
            #expect(recorded == migrator.migrations.map(\.name))
        }
    }

    @Test("an applied migration whose text changed is refused")
    func editedMigrationRefused() async throws {
        try await TestDatabase.withSchema { _, pool in
            let migrator = try StoreFixture.migrator()
            try await migrator.migrate(pool: pool, logger: StoreFixture.logger)
            var edited = migrator.migrations
            edited[0].sql += "\n-- edited"
            edited[0].checksum = "0000"
            await #expect(throws: MigrationError.self) {
                try await Migrator(migrations: edited).migrate(pool: pool, logger: StoreFixture.logger)
            }
        }
    }
}
