import LedgerStore
import Postgres
import Sealing
import Testing

/// The subject store on a real PostgreSQL (migration 0033): look-ups keep no id, erasure
/// destroys the key, and keys wrapped under a key-encryption key need that key.
@Suite struct SubjectStoreTests {
    @Test func oneIdIsOneSubjectAndTheTablesKeepNoId() async throws {
        try await LedgerHarness.withMigratedSchema { pool in
            let store = SubjectStore(pool: pool, keyEncryptionKey: nil)
            #expect(try await store.subject(forUser: "alice@example.com", creating: false) == nil)
            let alice = try #require(try await store.subject(forUser: "alice@example.com", creating: true))
            let again = try #require(try await store.subject(forUser: "alice@example.com", creating: false))
            #expect(again.subject == alice.subject && again.key.bytes == alice.key.bytes)
            let bob = try #require(try await store.subject(forUser: "bob", creating: true))
            #expect(bob.subject != alice.subject)
            #expect(try await store.key(of: alice.subject)?.bytes == alice.key.bytes)

            let dump = try await pool.withConnection { connection in
                try connection.query("SELECT string_agg(t::text, ' ') FROM (SELECT * FROM subjects) t").first?.decode(0, as: String?.self)
            }
            #expect(dump?.contains("alice") == false)
        }
    }

    @Test func firstWritesOfOneIdRacingMakeOneSubject() async throws {
        try await LedgerHarness.withMigratedSchema { pool in
            let store = SubjectStore(pool: pool, keyEncryptionKey: nil)
            let subjects = try await withThrowingTaskGroup(of: SubjectID?.self) { group in
                for _ in 0..<12 { group.addTask { try await store.subject(forUser: "racer", creating: true)?.subject } }
                return try await group.reduce(into: Set<SubjectID?>()) { $0.insert($1) }
            }
            #expect(subjects.count == 1 && subjects.first! != nil)
        }
    }

    @Test func erasureDestroysTheKeyAndTheIdsLookUpKeepsTheTokensAndTheSameIdIsThenSomeoneNew() async throws {
        try await LedgerHarness.withMigratedSchema { pool in
            let store = SubjectStore(pool: pool, keyEncryptionKey: nil)
            let alice = try #require(try await store.subject(forUser: "alice", creating: true))
            try await store.bind(token: "0D2B9A4C-1F7E-4E8A-9C7B-6A5D4E3F2A1B", to: alice.subject)
            let token = "0d2b9a4c-1f7e-4e8a-9c7b-6a5d4e3f2a1b"
            #expect(try await store.subjects(forTokens: [token, "unknown"]).mapValues(\.subject) == [token: alice.subject])
            #expect(try await store.subjects(forTokens: [token])[token]?.key?.bytes == alice.key.bytes)
            let handle = Handle.seal("alice", field: .userId, subject: alice.subject, key: alice.key)

            #expect(try await store.erase(alice.subject))
            #expect(try await store.erase(alice.subject) == false)
            #expect(try await store.key(of: alice.subject) == nil)
            // Her token is still known as hers, with no key: what names it later reads erased.
            let known = try #require(try await store.subjects(forTokens: [token])[token])
            #expect(known.subject == alice.subject && known.key == nil)
            #expect(try await store.subject(forUser: "alice", creating: false) == nil)

            let later = try #require(try await store.subject(forUser: "alice", creating: true))
            #expect(later.subject != alice.subject)
            // What was sealed for the erased subject opens with no key the store still holds.
            #expect(throws: SealingError.cannotOpen) { try Handle.open(handle, field: .userId, key: later.key) }
        }
    }

    @Test func keysWrappedUnderAKeyEncryptionKeyNeedThatKey() async throws {
        try await LedgerHarness.withMigratedSchema { pool in
            let kek = try KeyEncryptionKey(fileContents: Array(repeating: 7, count: 32))
            let wrapped = SubjectStore(pool: pool, keyEncryptionKey: kek)
            let alice = try #require(try await wrapped.subject(forUser: "alice", creating: true))
            let stored = try await pool.withConnection { connection in
                let row = try connection.query("SELECT key, wrapped_by FROM subjects").first!
                return (key: try row.decode(0, as: [UInt8].self), by: try row.decode(1, as: String.self))
            }
            #expect(stored.by == kek.id)
            #expect(stored.key != alice.key.bytes && stored.key.count == 60)
            #expect(try await SubjectStore(pool: pool, keyEncryptionKey: kek).key(of: alice.subject)?.bytes == alice.key.bytes)

            await #expect(throws: SubjectStoreError.keyEncryptionKeyMissing(wrappedBy: kek.id)) {
                _ = try await SubjectStore(pool: pool, keyEncryptionKey: nil).subject(forUser: "alice", creating: false)
            }
            let other = try KeyEncryptionKey(fileContents: Array(repeating: 8, count: 32))
            await #expect(throws: SubjectStoreError.keyEncryptionKeyMismatch(wrappedBy: kek.id, given: other.id)) {
                _ = try await SubjectStore(pool: pool, keyEncryptionKey: other).key(of: alice.subject)
            }
        }
    }
}
