import Foundation
import Ledger

/// A message as stored in the webhook projection: its id's parts, whose it is, its bytes.
public struct WebhookMessage: Sendable, Hashable {
    public var position: Int64
    public var sequence: Int32
    /// The first 16 hex digits of its ledger event's chain hash (`WebhookEvent.hashPrefix`).
    public var hashPrefix: String
    /// The user id, or "" for a message that is no one's.
    public var userKey: String
    public var body: Data

    public init(position: Int64, sequence: Int32, hashPrefix: String, userKey: String, body: Data) {
        self.position = position
        self.sequence = sequence
        self.hashPrefix = hashPrefix
        self.userKey = userKey
        self.body = body
    }

    public var id: String {
        sequence == DigestMessage.sequence
            ? DigestMessage.id(position: position, hashPrefix: hashPrefix)
            : WebhookEvent.id(position: position, hashPrefix: hashPrefix, sequence: sequence)
    }

    /// Log order.
    static func < (a: WebhookMessage, b: WebhookMessage) -> Bool {
        (a.position, a.sequence) < (b.position, b.sequence)
    }
}
