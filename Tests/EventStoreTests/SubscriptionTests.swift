import EventStore
import Foundation
import Postgres
import Testing

@Suite("Reading in commit order")
struct SubscriptionTests {
    @Test("a tailing reader beside 8 writers with late commits receives every event once, in order")
    func tailBesideLateCommits() async throws {
        try await StoreFixture.with { fixture in
            let writers = 8
            let perWriter = 12
            let reader = Task {
                var received: [RecordedEvent] = []
                for try await event in fixture.store.subscribe(after: 0, conninfo: fixture.conninfo, pollInterval: .milliseconds(200)) {
                    received.append(event)
                    if received.count == writers * perWriter { break }
                }
                return received
            }
            let written = try await withThrowingTaskGroup(of: [UUID].self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        var ids: [UUID] = []
                        for n in 0..<perWriter {
                            let candidate = event(#"{"writer": \#(writer), "n": \#(n)}"#)
                            ids.append(candidate.id)
                            if n.isMultiple(of: 2) {
                                // Append, then hold the transaction open a random while before
                                // committing: positions must still reach the reader in order.
                                let delay = Double.random(in: 0...0.015)
                                try await fixture.pool.withTransaction { connection in
                                    try EventStore.append([StreamAppend([candidate], to: "w\(writer)")], in: connection)
                                    try connection.execute("SELECT pg_sleep(\(delay))")
                                }
                            } else {
                                try await fixture.store.append([candidate], to: "w\(writer)")
                            }
                        }
                        return ids
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            let received = try await withTimeout(seconds: 60) { try await reader.value }
            #expect(Set(received.map(\.id)) == Set(written), "every committed event, exactly once")
            #expect(received.count == written.count)
            #expect(received.map(\.position) == Array(1...Int64(written.count)), "in position order, no gap")
        }
    }

    @Test("a reader resumes from its saved checkpoint")
    func resumeFromCheckpoint() async throws {
        try await StoreFixture.with { fixture in
            let store = fixture.store
            for n in 1...5 { try await store.append([event(#"{"n": \#(n)}"#)], to: "c") }
            #expect(try await store.checkpoint(named: "projection") == 0)
            var seen: [Int64] = []
            for try await event in store.subscribe(after: 0, conninfo: fixture.conninfo) {
                seen.append(event.position)
                if event.position == 3 {
                    try await store.saveCheckpoint(event.position, named: "projection")
                    break
                }
            }
            let resumed = try await store.checkpoint(named: "projection")
            var rest: [Int64] = []
            for try await event in store.subscribe(after: resumed, conninfo: fixture.conninfo) {
                rest.append(event.position)
                if event.position == 5 { break }
            }
            #expect(seen == [1, 2, 3])
            #expect(rest == [4, 5])
        }
    }

    @Test("old payload versions are upcast on read and never rewritten")
    func upcasting() async throws {
        try await StoreFixture.with { fixture in
            try await fixture.store.append(
                [NewEvent(type: "PriceSet", schemaVersion: 1, payload: JSONB(#"{"cents": 99}"#))], to: "p")
            let upcasting = EventStore(
                pool: fixture.pool,
                upcasters: Upcasters([
                    Upcaster(eventType: "PriceSet", from: 1) { old in
                        let cents = try old.decode([String: Int64].self)["cents"] ?? 0
                        return try JSONB(encoding: ["price_minor": cents, "currency_set": 0])
                    }
                ]),
                logger: StoreFixture.logger)
            let read = try await upcasting.read(stream: "p")
            #expect(read[0].schemaVersion == 2)
            #expect(try read[0].payload.decode([String: Int64].self) == ["price_minor": 99, "currency_set": 0])
            let stored = try await fixture.store.read(stream: "p")
            #expect(stored[0].schemaVersion == 1)
            #expect(try await ChainVerifier(pool: fixture.pool).verify() == .verified(events: 1, head: stored[0].hash))
        }
    }
}

/// Fails instead of hanging when a reader never gets what it waits for.
func withTimeout<T: Sendable>(seconds: Double, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw TimeoutError()
        }
        let first = try await group.next()!
        group.cancelAll()
        return first
    }
}

struct TimeoutError: Error {}
