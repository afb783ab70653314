import Crypto
import Foundation
import Postgres
import Primitives
import Sealing

/// Whom a document is sealed for (`DocumentEnvelope`): a person's subject and key.
public struct DocumentSeal: Sendable {
    public let subject: SubjectID
    let key: SubjectKey

    public init(subject: SubjectID, key: SubjectKey) {
        self.subject = subject
        self.key = key
    }
}

/// Verbatim evidence (receipts, Apple's bodies, notifications), stored once under the sha256 of
/// its bytes in the append-only `documents` table; events cite it by that name.
///
/// A document submitted for a person is stored sealed for them (`insert(_:kind:sealedFor:)`),
/// and named by the SHA-256 of its envelope: the table's check, `verify` and idempotent
/// re-submission hold unchanged. Reading opens envelopes with `subjects`' keys; one whose
/// person is erased reads as `erased:SUBJECT`.
public struct DocumentStore: Sendable {
    let pool: ConnectionPool
    let subjects: SubjectStore?

    /// `subjects`: where the keys that open sealed documents are; without it, envelopes are
    /// read as they are stored.
    public init(pool: ConnectionPool, subjects: SubjectStore? = nil) {
        self.pool = pool
        self.subjects = subjects
    }

    /// The hex sha256 that names `bytes`.
    public static func name(of bytes: some Sequence<UInt8>) -> String {
        Hex.encode(SHA256.hash(data: Array(bytes)))
    }

    /// The statement that stores `bytes` under its name unless already stored, with that name.
    /// A document commits in the transaction of the events citing it: receipts, Apple's answers
    /// and notifications go `alongside` their append (`LedgerLog.append`), and imports write
    /// both in their own transaction. So no event commits without its document, and a document
    /// costs no transaction of its own.
    ///
    /// `sealedFor`: the person the document is about, whose key seals it; nil for a document
    /// that names no one (a price list), or a person recorded in clear before erasure came.
    package static func insert(_ document: [UInt8], kind: String, sealedFor seal: DocumentSeal? = nil) -> (name: String, statement: SQL) {
        let bytes = seal.map { DocumentEnvelope.seal(document, subject: $0.subject, key: $0.key) } ?? document
        let digest = Array(SHA256.hash(data: bytes))
        return (Hex.encode(digest), .prepared("""
            INSERT INTO documents (sha256, kind, content) VALUES (\(digest), \(kind), \(bytes))
            ON CONFLICT (sha256) DO NOTHING
            """))
    }

    /// The bytes stored under `name` (hex sha256), or nil.
    public func get(_ name: String) async throws -> [UInt8]? {
        try await get([name])[name]
    }

    /// The documents stored under `names`, by name, in one query, envelopes opened (an erased
    /// person's reads `erased:SUBJECT`); unknown names are absent.
    public func get(_ names: [String]) async throws -> [String: [UInt8]] {
        try await opened(try await stored(names)).opened
    }

    /// A document as stored and as read: what its name is the SHA-256 of, what it holds
    /// (`get`), and whom it is sealed for.
    public struct Stored: Sendable {
        public var bytes: [UInt8]
        /// What it holds; `erased:SUBJECT` when `isErased`.
        public var content: [UInt8]
        public var sealedFor: SubjectID?
        /// Sealed for a person since erased: its content is gone with their key.
        public var isErased: Bool
    }

    /// The document stored under `name`, as stored and as read; nil when there is none.
    public func document(_ name: String) async throws -> Stored? {
        guard let bytes = try await stored([name])[name] else { return nil }
        let (opened, erased) = try await opened([name: bytes])
        return Stored(bytes: bytes, content: opened[name] ?? bytes, sealedFor: DocumentEnvelope.subject(of: bytes), isErased: !erased.isEmpty)
    }

    /// `stored` with its envelopes opened, and the names of those whose person is erased
    /// (which read `erased:SUBJECT`).
    private func opened(_ stored: [String: [UInt8]]) async throws -> (opened: [String: [UInt8]], erased: Set<String>) {
        guard let subjects else { return (stored, []) }
        let sealed = stored.compactMapValues(DocumentEnvelope.subject(of:))
        guard !sealed.isEmpty else { return (stored, []) }
        let keys = try await subjects.keys(of: Set(sealed.values))
        var opened = stored
        var erased: Set<String> = []
        for (name, subject) in sealed {
            guard let key = keys[subject] else {
                opened[name] = Array(Handle.erased(subject).utf8)
                erased.insert(name)
                continue
            }
            do {
                opened[name] = try DocumentEnvelope.open(stored[name] ?? [], key: key)
            } catch {
                throw SubjectStoreError.damagedKey(subject.rawValue)
            }
        }
        return (opened, erased)
    }

    /// The bytes stored under `names`, envelopes as they are.
    func stored(_ names: [String]) async throws -> [String: [UInt8]] {
        let valid = names.filter { Self.bytes(hex: $0) != nil }
        guard !valid.isEmpty else { return [:] }
        return try await pool.withConnection { connection in
            var found: [String: [UInt8]] = [:]
            for row in try connection.query("""
                SELECT sha256, content FROM documents
                WHERE sha256 IN (SELECT decode(name, 'hex') FROM unnest(\(PostgresArray(valid.map(Optional.some)))::text[]) AS name)
                """) {
                found[Hex.encode(try row.decode(0, as: [UInt8].self))] = try row.decode(1)
            }
            return found
        }
    }

    /// Up to `limit` stored documents whose name (sha256, raw bytes) sorts after `name`, in
    /// name order, with their bytes: a full walk of the documents a page at a time.
    public func page(after name: [UInt8], limit: Int) async throws -> [(name: [UInt8], content: [UInt8])] {
        try await pool.withConnection { connection in
            try connection.query("""
                SELECT sha256, content FROM documents WHERE sha256 > \(name) ORDER BY sha256 LIMIT \(Int64(limit))
                """).map { (name: try $0.decode(0), content: try $0.decode(1)) }
        }
    }

    static func bytes(hex: String) -> [UInt8]? {
        hex.count == 64 ? Hex.decode(hex) : nil
    }
}
