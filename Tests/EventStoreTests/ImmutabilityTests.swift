import EventStore
import Foundation
import Postgres
import Testing

@Suite("The log is append-only and tamper-evident")
struct ImmutabilityTests {
    @Test("UPDATE, DELETE and TRUNCATE fail for the application role, the owner and a superuser",
          arguments: ["UPDATE events SET event_type = 'Changed'", "DELETE FROM events", "TRUNCATE events"])
    func changesRefused(statement: String) async throws {
        try await StoreFixture.with { fixture in
            try await fixture.store.append([event()], to: "fact")
            for (role, expected) in [("ledger_app", SQLState.insufficientPrivilege), ("ledger_owner", SQLStateLedger.appendOnly), (nil, SQLStateLedger.appendOnly)] {
                await #expect {
                    try await fixture.pool.withTransaction { connection in
                        if let role { try connection.execute("SET LOCAL ROLE \(identifier: role)") }
                        try connection.execute(SQL(unsafeSQL: statement))
                    }
                } throws: { error in
                    (error as? PostgresError)?.sqlState == expected
                }
            }
            #expect(try await fixture.store.read(stream: "fact").map(\.type) == ["Tested"])
        }
    }

    @Test("the application role can append and read")
    func applicationRoleAppends() async throws {
        try await StoreFixture.with { fixture in
            let appended = try await fixture.pool.withTransaction { connection in
                try connection.execute("SET LOCAL ROLE ledger_app")
                return try EventStore.append([StreamAppend([event()], to: "app")], in: connection)
            }
            #expect(appended.map(\.position) == [1])
        }
    }

    @Test("one byte changed in one event by a superuser is found at that position; an untouched log verifies")
    func tamperFound() async throws {
        try await StoreFixture.with { fixture in
            for n in 1...6 { try await fixture.store.append([event(#"{"n": \#(n)}"#)], to: "t\(n % 2)") }
            let verifier = ChainVerifier(pool: fixture.pool, pageSize: 4)
            guard case .verified(let count, let head) = try await verifier.verify() else {
                Issue.record("an untouched log must verify")
                return
            }
            #expect(count == 6)
            #expect(head == (try await fixture.store.events(after: 5))[0].hash)
            try await fixture.pool.withConnection { connection in
                try connection.executeScript(unsafeSQL: """
                    ALTER TABLE events DISABLE TRIGGER events_90_immutable;
                    UPDATE events SET payload = '{"n": 7}' WHERE position = 4;
                    ALTER TABLE events ENABLE TRIGGER events_90_immutable;
                    """)
            }
            #expect(try await verifier.verify() == .broken(position: 4, reason: "its content does not match its hash"))
        }
    }

    @Test("a removed event is found as a gap")
    func deletionFound() async throws {
        try await StoreFixture.with { fixture in
            for _ in 1...3 { try await fixture.store.append([event()], to: "d") }
            try await fixture.pool.withConnection { connection in
                try connection.executeScript(unsafeSQL: """
                    ALTER TABLE events DISABLE TRIGGER events_90_immutable;
                    DELETE FROM events WHERE position = 2;
                    ALTER TABLE events ENABLE TRIGGER events_90_immutable;
                    """)
            }
            guard case .broken(let position, _) = try await ChainVerifier(pool: fixture.pool).verify() else {
                Issue.record("a gap must break the chain")
                return
            }
            #expect(position == 3)
        }
    }
}
