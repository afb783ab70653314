import Crypto
import Postgres

/// Checks the evidence behind the events: every document an event cites exists, and every
/// stored document's bytes hash to its name (recomputed here, not trusted to the table's CHECK).
public struct DocumentVerifier: Sendable {
    public enum Outcome: Sendable, Hashable {
        case verified(documents: Int64, references: Int64)
        /// The first event citing a missing document, or a document whose bytes do not match.
        case broken(String)
    }

    let pool: ConnectionPool

    public init(pool: ConnectionPool) {
        self.pool = pool
    }

    public func verify() async throws -> Outcome {
        let (missing, references): (String?, Int64) = try await pool.withConnection { connection in
            let references: Int64 = try connection.query("""
                SELECT count(*) FROM events WHERE payload ? 'document_sha256' AND jsonb_typeof(payload->'document_sha256') = 'string'
                """)[0].decode(0)
            let row = try connection.query("""
                SELECT e.position, e.payload->>'document_sha256' FROM events e
                WHERE e.payload ? 'document_sha256' AND jsonb_typeof(e.payload->'document_sha256') = 'string'
                  AND NOT EXISTS (SELECT 1 FROM documents d WHERE encode(d.sha256, 'hex') = e.payload->>'document_sha256')
                ORDER BY e.position LIMIT 1
                """).first
            guard let row else { return (nil, references) }
            let position: Int64 = try row.decode(0)
            let name: String = try row.decode(1)
            return ("event \(position) cites document \(name), which is missing", references)
        }
        if let missing { return .broken(missing) }
        var after: [UInt8] = []
        var checked: Int64 = 0
        while true {
            let start = after
            let page: [([UInt8], [UInt8])] = try await pool.withConnection { connection in
                try connection.query("""
                    SELECT sha256, content FROM documents WHERE sha256 > \(start) ORDER BY sha256 LIMIT 500
                    """).map { (try $0.decode(0), try $0.decode(1)) }
            }
            guard let last = page.last else { break }
            for (name, content) in page where Array(SHA256.hash(data: content)) != name {
                return .broken("document \(Hex.encode(name)) does not hash to its name")
            }
            checked += Int64(page.count)
            after = last.0
        }
        return .verified(documents: checked, references: references)
    }
}
