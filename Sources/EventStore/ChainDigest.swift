import Postgres
import Primitives

/// A published chain head, `POSITION:HASH` (hash in lowercase hex). Publishing it (in a
/// ticket, an email to the auditor, a newspaper) lets anyone later prove that the log still
/// extends it: a ledger rewritten wholesale, chain recomputed and all, no longer holds that hash
/// at that position.
public struct ChainDigest: Sendable, Hashable, CustomStringConvertible {
    public var position: Int64
    public var hash: [UInt8]

    public init(position: Int64, hash: [UInt8]) {
        self.position = position
        self.hash = hash
    }

    /// Parses `POSITION:HASH`; nil when it is not that shape.
    public init?(parsing text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let position = Int64(parts[0]), position >= 0, parts[1].count == 64,
              let bytes = Hex.decode(parts[1])
        else { return nil }
        self.init(position: position, hash: bytes)
    }

    public var description: String { "\(position):" + Hex.encode(hash) }
}

extension ChainVerifier {
    /// What a published digest says about a verified log.
    public enum DigestCheck: Sendable, Hashable {
        /// The event at the digest's position still has the digest's hash.
        case extends
        /// The log is shorter than the digest: events were removed.
        case truncated(head: Int64)
        /// The event at that position has another hash: history was rewritten.
        case differs(found: [UInt8])
    }

    /// Compares a digest with the stored log. Meaningful after `verify()` passed: the chain
    /// from the first event is then sound, so the stored hash at the position is the one the
    /// log's history computes.
    public func check(_ digest: ChainDigest) async throws -> DigestCheck {
        if digest.position == 0 {
            return digest.hash == Self.genesisHash ? .extends : .differs(found: Self.genesisHash)
        }
        return try await pool.withConnection { connection in
            guard let row = try connection.query("SELECT hash FROM events WHERE position = \(digest.position)").first else {
                let head: Int64 = try connection.query("SELECT coalesce(max(position), 0) FROM events")[0].decode(0)
                return .truncated(head: head)
            }
            let found: [UInt8] = try row.decode(0)
            return found == digest.hash ? .extends : .differs(found: found)
        }
    }
}
