import Foundation
import Ledger

/// A message as stored in the webhook projection: its id's parts, whose it is, its bytes.
public struct WebhookMessage: Sendable, Hashable {
    public var position: Int64
    public var sequence: Int32
    /// The user id, or "" for a message that is no one's.
    public var userKey: String
    public var body: Data

    public init(position: Int64, sequence: Int32, userKey: String, body: Data) {
        self.position = position
        self.sequence = sequence
        self.userKey = userKey
        self.body = body
    }

    public var id: String { WebhookEvent.id(position: position, sequence: sequence) }

    /// Log order.
    static func < (a: WebhookMessage, b: WebhookMessage) -> Bool {
        (a.position, a.sequence) < (b.position, b.sequence)
    }
}
