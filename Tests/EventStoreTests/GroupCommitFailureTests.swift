import EventStore
import Foundation
import Postgres
import Testing

@Suite("Group commit when the connection dies")
struct GroupCommitFailureTests {
    @Test("a backend killed in the middle of a batch loses no append and doubles none")
    func backendDiesMidBatch() async throws {
        try await StoreFixture.with { fixture in
            // The first event typed "Fatal" to reach the server kills its own backend inside the
            // batch INSERT; a sequence, not a table, remembers it (the dying transaction rolls back).
            try await fixture.pool.withConnection { connection in
                try connection.executeScript(unsafeSQL: """
                    CREATE SEQUENCE fatal_once;
                    CREATE FUNCTION die_once() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                        IF NEW.event_type = 'Fatal' AND nextval('fatal_once') = 1 THEN
                            PERFORM pg_terminate_backend(pg_backend_pid());
                        END IF;
                        RETURN NEW;
                    END $$;
                    CREATE TRIGGER events_05_die_once BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION die_once();
                    """)
            }
            let store = fixture.store
            let appended = try await withThrowingTaskGroup(of: RecordedEvent.self) { group in
                for caller in 0..<8 {
                    group.addTask {
                        try await store.append(
                            [event(type: caller == 3 ? "Fatal" : "Tested")], to: "caller-\(caller)", expecting: .noStream)[0]
                    }
                }
                return try await group.reduce(into: [RecordedEvent]()) { $0.append($1) }
            }
            let killed = try await fixture.pool.withConnection { try $0.query("SELECT last_value FROM fatal_once").scalar(Int.self) }
            #expect(killed ?? 0 >= 1, "the trigger fired, so a backend did die mid-batch")
            #expect(Set(appended.map(\.streamID)) == Set((0..<8).map { "caller-\($0)" }))
            let log = try await store.events(after: 0, limit: 100)
            #expect(log.count == 8)
            #expect(Set(log.map(\.id)) == Set(appended.map(\.id)))
            #expect(log.map(\.position) == Array(1...8))
        }
    }
}
