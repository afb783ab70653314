import EventStore
import Foundation
import LedgerSchema
import Logging
import Postgres
import TestSupport

/// A migrated, empty log in a schema of its own, for one test.
struct StoreFixture {
    let conninfo: String
    let pool: ConnectionPool
    let store: EventStore

    static let logger = Logger(label: "test.event-store")

    /// The ledger's migrations, handed to the log's Migrator as LedgerStore and the CLI hand
    /// them (`Migrator.ledger()`): the log's tests need its tables and roles, not the ledger.
    static func migrator() throws -> Migrator {
        guard let directory = LedgerSchema.migrationsDirectory else {
            throw MigrationError("the Schema/migrations resource is missing from this build")
        }
        return try Migrator(directory: directory)
    }

    static func with<T>(_ body: (StoreFixture) async throws -> T) async throws -> T {
        try await TestDatabase.withSchema { conninfo, pool in
            try await migrator().migrate(pool: pool, logger: logger)
            let store = EventStore(pool: pool, logger: logger)
            return try await body(StoreFixture(conninfo: conninfo, pool: pool, store: store))
        }
    }
}

func event(_ payload: String = #"{"n": 1}"#, type: String = "Tested", id: UUID = UUID(), key: String? = nil) -> NewEvent {
    NewEvent(id: id, type: type, payload: JSONB(payload), idempotencyKey: key)
}
