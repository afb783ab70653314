import Primitives

/// The `ledger.digest` webhook message: the verified chain head at a publication, told to every
/// endpoint so that a copy of it lives outside the database (docs/webhooks.md). Not made from a
/// ledger event: its id is `dig_POSITION_HASH16` and its timestamp the publication's time.
public struct DigestMessage: Sendable, Hashable {
    public static let type = "ledger.digest"
    /// The sequence its copies take in the endpoints' outstanding messages, beside the ledger
    /// event messages' 0, 1, …: no ledger event's message has it.
    public static let sequence: Int32 = -1

    public var position: Int64
    /// The chain hash of the event at `position` (32 bytes).
    public var hash: [UInt8]
    /// When it was published (milliseconds since 1970, UTC).
    public var publishedAtMs: Int64

    public init(position: Int64, hash: [UInt8], publishedAtMs: Int64) {
        self.position = position
        self.hash = hash
        self.publishedAtMs = publishedAtMs
    }

    public var id: String { Self.id(position: position, hashPrefix: Hex.encode(hash.prefix(8))) }

    public static func id(position: Int64, hashPrefix: String) -> String { "dig_\(position)_\(hashPrefix)" }

    /// `POSITION:HASH`, what `verify --digest` takes.
    public var digest: String { "\(position):\(Hex.encode(hash))" }

    /// The line `LEDGER_DIGEST_FILE` gets: `POSITION:HASH 2026-11-28T10:00:00Z`.
    public var fileLine: String {
        // The body's instant to the second: `YYYY-MM-DDTHH:MM:SS` of `…SS.mmmZ`, then `Z`.
        "\(digest) \(RevenueDay.iso8601(publishedAtMs).prefix(19))Z"
    }

    /// Compact JSON with sorted keys, as every webhook body.
    public var bodyText: String {
        let object: JSONValue = .object([
            "type": .string(Self.type),
            "timestamp": .string(RevenueDay.iso8601(publishedAtMs)),
            "data": .object(["position": .integer(position), "hash": .string(Hex.encode(hash))]),
        ])
        return String(decoding: object.sortedCompactJSON(), as: UTF8.self)
    }
}
