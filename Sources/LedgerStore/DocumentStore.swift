import Crypto
import Foundation
import Postgres
import Primitives

/// Verbatim evidence (receipts, Apple's bodies, notifications), stored once under the sha256 of
/// its bytes in the append-only `documents` table; events cite it by that name.
public struct DocumentStore: Sendable {
    let pool: ConnectionPool

    public init(pool: ConnectionPool) {
        self.pool = pool
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
    package static func insert(_ bytes: [UInt8], kind: String) -> (name: String, statement: SQL) {
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

    /// The documents stored under `names`, by name, in one query; unknown names are absent.
    public func get(_ names: [String]) async throws -> [String: [UInt8]] {
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
