import Crypto
import Foundation
import Postgres

/// Verbatim evidence (receipts, Apple's bodies, notifications), stored once under the sha256 of
/// its bytes in the append-only `documents` table; events cite it by that name.
public struct DocumentStore: Sendable {
    let pool: ConnectionPool

    public init(pool: ConnectionPool) {
        self.pool = pool
    }

    /// The hex sha256 that names `bytes`.
    public static func name(of bytes: some Sequence<UInt8>) -> String {
        SHA256.hash(data: Array(bytes)).map { String(format: "%02x", $0) }.joined()
    }

    /// Stores `bytes` unless already stored; returns its name. Durable when it returns.
    @discardableResult
    public func put(_ bytes: [UInt8], kind: String) async throws -> String {
        let digest = Array(SHA256.hash(data: bytes))
        try await pool.withConnection { connection in
            try connection.execute("""
                INSERT INTO documents (sha256, kind, content) VALUES (\(digest), \(kind), \(bytes))
                ON CONFLICT (sha256) DO NOTHING
                """)
        }
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    /// Several documents in one round trip.
    public func put(_ documents: [(bytes: [UInt8], kind: String)]) async throws -> [String] {
        guard !documents.isEmpty else { return [] }
        let digests = documents.map { Array(SHA256.hash(data: $0.bytes)) }
        // One round trip: the inserts travel together and commit together (pipeline mode).
        let statements: [SQL] = zip(documents, digests).map { document, digest in
            """
            INSERT INTO documents (sha256, kind, content) VALUES (\(digest), \(document.kind), \(document.bytes))
            ON CONFLICT (sha256) DO NOTHING
            """
        }
        try await pool.withConnection { connection in _ = try connection.pipeline(statements) }
        return digests.map { $0.map { String(format: "%02x", $0) }.joined() }
    }

    /// The bytes stored under `name` (hex sha256), or nil.
    public func get(_ name: String) async throws -> [UInt8]? {
        guard let digest = Self.bytes(hex: name) else { return nil }
        return try await pool.withConnection { connection in
            try connection.query("SELECT content FROM documents WHERE sha256 = \(digest)").first?.decode(0, as: [UInt8].self)
        }
    }

    static func bytes(hex: String) -> [UInt8]? {
        guard hex.count == 64 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}
