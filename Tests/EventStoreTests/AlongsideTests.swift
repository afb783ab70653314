import EventStore
import Foundation
import Postgres
import Testing

@Suite("Statements alongside an append")
struct AlongsideTests {
    /// A table of the caller's own, as the ledger's documents are to the log.
    private func evidence(_ fixture: StoreFixture) async throws {
        try await fixture.pool.withConnection { try $0.execute("CREATE TABLE evidence (name text PRIMARY KEY)") }
    }

    private func store(_ name: String) -> SQL {
        "INSERT INTO evidence (name) VALUES (\(name)) ON CONFLICT (name) DO NOTHING"
    }

    private func stored(_ fixture: StoreFixture) async throws -> Set<String> {
        try await fixture.pool.withConnection { connection in
            Set(try connection.query("SELECT name FROM evidence").map { try $0.decode(0) as String })
        }
    }

    @Test("they commit with the events, and not at all when the append is refused")
    func commitWithTheEvents() async throws {
        try await StoreFixture.with { fixture in
            try await evidence(fixture)
            try await fixture.store.append([StreamAppend([event()], to: "s", expecting: .noStream)], alongside: [store("first"), store("second")])
            let refused = await #expect(throws: EventStoreError.self) {
                try await fixture.store.append([StreamAppend([event()], to: "s", expecting: .noStream)], alongside: [store("refused")])
            }
            #expect(refused?.code == .wrongExpectedVersion)
            #expect(try await stored(fixture) == ["first", "second"])
            #expect(try await fixture.store.read(stream: "s").count == 1)
        }
    }

    @Test("in a group-committed batch, a refused command's statements roll back and every other command's commit")
    func batchWithAConflict() async throws {
        try await StoreFixture.with { fixture in
            try await evidence(fixture)
            // Sixteen callers race for one stream's first version while sixteen others append
            // to streams of their own, so batches mix winners, losers and bystanders and fall
            // back to one command at a time.
            let outcomes = try await withThrowingTaskGroup(of: (String, Bool).self) { group in
                for index in 0..<32 {
                    group.addTask {
                        let racing = index % 2 == 0
                        let name = racing ? "race-\(index)" : "own-\(index)"
                        do {
                            try await fixture.store.append(
                                [StreamAppend([event()], to: racing ? "race" : name, expecting: .noStream)],
                                alongside: [store(name), store("shared")])
                            return (name, true)
                        } catch EventStoreError.Code.wrongExpectedVersion {
                            return (name, false)
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let appended = Set(outcomes.filter(\.1).map(\.0))
            #expect(appended.filter { $0.hasPrefix("race-") }.count == 1, "one caller wins the race")
            #expect(appended.filter { $0.hasPrefix("own-") }.count == 16, "every bystander appends")
            #expect(try await stored(fixture) == appended.union(["shared"]), "exactly the appended commands' statements commit")
        }
    }
}
