import Crypto
import Postgres
import Primitives

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
        let (references, missing) = try await LedgerReads(pool: pool).documentReferences()
        if let missing { return .broken("event \(missing.position) cites document \(missing.name), which is missing") }
        var after: [UInt8] = []
        var checked: Int64 = 0
        while true {
            let start = after
            let page = try await DocumentStore(pool: pool).page(after: start, limit: 500)
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
