import EventStore
import Ledger
import LedgerStore
import Postgres
import Sealing
import TestSupport
import Testing

/// The edges' translation (People): an id becomes one handle, a handle opens to its id, and
/// after erasure to `erased:SUBJECT`.
@Suite struct PeopleTests {
    /// People on `pool`, whose log records that sealing began, as `serve` records it on an empty log.
    static func sealing(_ pool: ConnectionPool) async throws -> People {
        let log = LedgerLog(store: EventStore(pool: pool, logger: TestDatabase.logger))
        try await log.append(
            [LedgerAppend(stream: Streams.erasure, expectation: .noStream, events: [.erasureBegan(ErasureBegan(beganAtMs: 1))])],
            metadata: RequestMetadata(actor: "test"))
        return People(subjects: SubjectStore(pool: pool, keyEncryptionKey: nil))
    }

    @Test func beforeSealingBeganAnIdIsRecordedAsItIs() async throws {
        try await LedgerHarness.withMigratedSchema { pool in
            let people = People(subjects: SubjectStore(pool: pool, keyEncryptionKey: nil))
            let began = try await people.sealingBegan()
            #expect(!began)
            #expect(try await people.handle(forUser: "alice") == "alice")
            #expect(try await people.knownHandle(forUser: "alice") == nil)
        }
    }

    @Test func anIdIsOneHandleWhichOpensToItInEveryText() async throws {
        try await LedgerHarness.withMigratedSchema { pool in
            let people = try await Self.sealing(pool)
            #expect(try await people.knownHandle(forUser: "alice") == nil)
            let alice = try await people.handle(forUser: "alice")
            #expect(try await people.handle(forUser: "alice") == alice)
            #expect(try await people.knownHandle(forUser: "alice") == alice)
            #expect(try await people.knownHandle(forUser: alice) == alice)
            #expect(try await people.handle(forUser: alice) == alice)
            let bob = try await people.handle(forUser: #"bob "the" <builder>"#)

            let json = Array(#"{"a":"\#(alice)","b":"to \#(bob)"}"#.utf8)
            let opened = String(decoding: try await people.open(json, escaping: .json), as: UTF8.self)
            #expect(opened == #"{"a":"alice","b":"to bob \"the\" <builder>"}"#)
            #expect(try await people.open("held by \(alice).") == "held by alice.")
        }
    }

    @Test func anErasedHandleOpensToItsSubjectOnlyAndTheIdStartsAgain() async throws {
        try await LedgerHarness.withMigratedSchema { pool in
            let people = try await Self.sealing(pool)
            let subjects = people.subjects
            let alice = try await people.handle(forUser: "alice")
            let subject = try #require(Handle.subject(of: alice))
            #expect(try await subjects.erase(subject))

            #expect(try await people.open("held by \(alice)") == "held by erased:\(subject.rawValue)")
            #expect(try await people.knownHandle(forUser: "alice") == nil)
            #expect(try await people.knownHandle(forUser: alice) == nil)
            let again = try await people.handle(forUser: "alice")
            #expect(again != alice)
            // An erased handle sent back is no way into the erased subject.
            #expect(try await people.handle(forUser: alice) != alice)
        }
    }
}
