import EventStore
import Foundation
import Postgres
import Testing

@Suite("Appends with an expected version")
struct ExpectedVersionTests {
    @Test("16 tasks racing for each version: exactly one wins it, the others get the conflict error")
    func racingAppends() async throws {
        try await StoreFixture.with { fixture in
            let rounds = 12
            var winners: [UUID] = []
            for version in 0..<rounds {
                let outcomes = try await withThrowingTaskGroup(of: (UUID, Bool).self) { group in
                    for _ in 0..<16 {
                        group.addTask {
                            let candidate = event(#"{"claim": true}"#)
                            do {
                                try await fixture.store.append(
                                    [candidate], to: "race", expecting: version == 0 ? .noStream : .exactly(Int64(version)))
                                return (candidate.id, true)
                            } catch EventStoreError.Code.wrongExpectedVersion {
                                return (candidate.id, false)
                            }
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                let won = outcomes.filter(\.1)
                #expect(won.count == 1, "version \(version + 1) must have exactly one winner")
                #expect(outcomes.count - won.count == 15)
                winners += won.map(\.0)
            }
            let stream = try await fixture.store.read(stream: "race")
            #expect(stream.map(\.streamVersion) == Array(1...Int64(rounds)), "no gap and no duplicate")
            #expect(stream.map(\.id) == winners)
        }
    }

    @Test("noStream, exactly and any each check what they say")
    func expectationKinds() async throws {
        try await StoreFixture.with { fixture in
            let store = fixture.store
            try await store.append([event(), event()], to: "s", expecting: .noStream)
            // Behind (the next version is taken) and ahead (a gap would open) are both conflicts.
            for expected in [ExpectedVersion.noStream, .exactly(1), .exactly(3), .exactly(7)] {
                let conflict = await #expect(throws: EventStoreError.self) {
                    try await store.append([event()], to: "s", expecting: expected)
                }
                #expect(conflict?.code == .wrongExpectedVersion, "\(expected)")
            }
            let ahead = await #expect(throws: EventStoreError.self) { try await store.append([event()], to: "s", expecting: .exactly(3)) }
            #expect(ahead?.message.contains("stream is at version 2") == true, "\(String(describing: ahead))")
            let third = try await store.append([event()], to: "s", expecting: .exactly(2))
            let fourth = try await store.append([event()], to: "s", expecting: .any)
            #expect(third.map(\.streamVersion) == [3])
            #expect(fourth.map(\.streamVersion) == [4])
            #expect(fourth[0].position == 4)
        }
    }

    @Test("an append to several streams commits all or nothing")
    func multiStreamAtomic() async throws {
        try await StoreFixture.with { fixture in
            let store = fixture.store
            try await store.append([event()], to: "b", expecting: .noStream)
            await #expect(throws: EventStoreError.self) {
                try await store.append([
                    StreamAppend([event()], to: "a", expecting: .noStream),
                    StreamAppend([event()], to: "b", expecting: .noStream),
                ])
            }
            #expect(try await store.read(stream: "a").isEmpty)
            let both = try await store.append([
                StreamAppend([event()], to: "a", expecting: .noStream),
                StreamAppend([event()], to: "b", expecting: .exactly(1)),
            ])
            #expect(both.map(\.streamID) == ["a", "b"])
            #expect(both.map(\.position) == [2, 3])
        }
    }

    @Test("malformed appends are refused before reaching the database")
    func invalidAppends() async throws {
        try await StoreFixture.with { fixture in
            await #expect(throws: EventStoreError.self) { try await fixture.store.append([], to: "s") }
            await #expect(throws: EventStoreError.self) { try await fixture.store.append([event()], to: "") }
            await #expect(throws: EventStoreError.self) { try await fixture.store.append([event(type: "")], to: "s") }
        }
    }
}
