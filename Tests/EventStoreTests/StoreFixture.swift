import EventStore
import Foundation
import Logging
import Postgres
import TestSupport

/// A migrated, empty log in a schema of its own, for one test.
struct StoreFixture {
    let conninfo: String
    let pool: ConnectionPool
    let store: EventStore

    static let logger = Logger(label: "test.event-store")

    static func with<T>(_ body: (StoreFixture) async throws -> T) async throws -> T {
        try await TestDatabase.withSchema { conninfo, pool in
            try await Migrator().migrate(pool: pool, logger: logger)
            let store = EventStore(pool: pool, logger: logger)
            return try await body(StoreFixture(conninfo: conninfo, pool: pool, store: store))
        }
    }
}

func event(_ payload: String = #"{"n": 1}"#, type: String = "Tested", id: UUID = UUID(), key: String? = nil) -> NewEvent {
    NewEvent(id: id, type: type, payload: JSONB(payload), idempotencyKey: key)
}
