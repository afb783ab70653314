import EventStore
import Foundation
import Postgres
import Testing

@Suite("Idempotent appends")
struct IdempotencyTests {
    @Test("the same idempotency key and payload twice gives one event; another payload fails")
    func sameKey() async throws {
        try await StoreFixture.with { fixture in
            let store = fixture.store
            let first = try await store.append([event(#"{"a": 1, "b": [1, 2]}"#, key: "order-42")], to: "o", expecting: .noStream)
            // Another event id, keys in another order and other spacing: the same fact.
            let again = try await store.append([event(#"{"b":[1,2],"a":1}"#, key: "order-42")], to: "o", expecting: .noStream)
            #expect(again == first)
            #expect(try await store.headPosition() == 1)
            await #expect {
                try await store.append([event(#"{"a": 2}"#, key: "order-42")], to: "o", expecting: .noStream)
            } throws: { ($0 as? EventStoreError)?.code == .idempotencyConflict }
            #expect(try await store.headPosition() == 1)
        }
    }

    @Test("the same event id twice gives one event, also inside a group-committed batch")
    func sameEventID() async throws {
        try await StoreFixture.with { fixture in
            let store = fixture.store
            let id = UUID()
            let results = try await withThrowingTaskGroup(of: [RecordedEvent].self) { group in
                for _ in 0..<8 {
                    group.addTask { try await store.append([event(#"{"x": 1}"#, id: id)], to: "dup") }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(results.map { $0[0].position }).count == 1)
            #expect(try await store.read(stream: "dup").count == 1)
            await #expect(throws: EventStoreError.self) {
                try await store.append([event(#"{"x": 2}"#, id: id)], to: "dup")
            }
        }
    }

    @Test("an idempotent retry inside the caller's transaction returns the original")
    func inTransaction() async throws {
        try await StoreFixture.with { fixture in
            let candidate = event(#"{"t": true}"#, key: "k")
            let first = try await fixture.pool.withTransaction { connection in
                try EventStore.append([StreamAppend([candidate], to: "t", expecting: .noStream)], in: connection)
            }
            let second = try await fixture.pool.withTransaction { connection in
                try EventStore.append([StreamAppend([candidate], to: "t", expecting: .noStream)], in: connection)
            }
            #expect(first == second)
        }
    }
}
