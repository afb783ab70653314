import Foundation
import Primitives

/// What the ledger tells the app's backends about one change: a Standard Webhooks message
/// (`{"type","timestamp","data"}`), made from one ledger event. Its id and bytes come from the
/// log alone (the event's position and chain hash, its place among that event's messages, its
/// recorded time), so a replay, a retry or a redelivery sends the same message and a receiver
/// deduplicates it; and an event written after a restore at the position of a lost one has
/// another hash, so another id: a receiver never drops it as one it already had.
public struct WebhookEvent: Sendable, Hashable {
    /// The ledger event it was made from.
    public var position: Int64
    /// That ledger event's chain hash (32 bytes): `data.hash` in hex, and the id's middle part.
    public var hash: [UInt8]
    /// Its place among the messages of that ledger event, from 0, in docs/webhooks.md's order of types.
    public var sequence: Int32
    public var type: WebhookEventType
    /// Whose it is: one user's messages reach an endpoint in log order. Nil when it is no one's.
    public var userId: String?
    /// When the ledger event was recorded (milliseconds since 1970, UTC): the body's `timestamp`.
    public var recordedAtMs: Int64
    /// `data` besides `position` and `user_id`, which the body adds.
    public var fields: [String: JSONValue]

    public init(
        position: Int64, hash: [UInt8], sequence: Int32, type: WebhookEventType, userId: String?, recordedAtMs: Int64,
        fields: [String: JSONValue]
    ) {
        self.position = position
        self.hash = hash
        self.sequence = sequence
        self.type = type
        self.userId = userId
        self.recordedAtMs = recordedAtMs
        self.fields = fields
    }

    /// The `webhook-id`, and the `id` of `GET /v1/events`.
    public var id: String { Self.id(position: position, hashPrefix: hashPrefix, sequence: sequence) }

    /// The hash's first 16 hex digits (8 bytes), as the id carries them and the messages' table
    /// stores them: enough to tell two events at one position apart, and short.
    public var hashPrefix: String { Hex.encode(hash.prefix(8)) }

    /// `evt_POSITION_HASH16_SEQUENCE`.
    public static func id(position: Int64, hashPrefix: String, sequence: Int32) -> String {
        "evt_\(position)_\(hashPrefix)_\(sequence)"
    }

    /// The body as sent and served: compact JSON, keys sorted, so the same message always has
    /// the same bytes (the signature covers them).
    public var body: Data { Data(bodyBytes) }

    /// The body as text, as the messages' table stores it.
    /// The app its body names (`data.bundle_id`); nil when it names none.
    public var bundleId: String? { fields["bundle_id"]?.stringValue }

    public var bodyText: String { String(decoding: bodyBytes, as: UTF8.self) }

    private var bodyBytes: [UInt8] {
        var data = fields
        data["position"] = .integer(position)
        data["hash"] = .string(Hex.encode(hash))
        if let userId { data["user_id"] = .string(userId) }
        let object: JSONValue = .object([
            "type": .string(type.rawValue),
            "timestamp": .string(RevenueDay.iso8601(recordedAtMs)),
            "data": .object(data),
        ])
        // JSONEncoder's bytes, written without it (JSONValue+SortedCompact).
        return object.sortedCompactJSON()
    }

}

/// The webhook types of docs/webhooks.md, in the order the messages of one ledger event come.
public enum WebhookEventType: String, Sendable, Hashable, CaseIterable, Codable {
    case purchaseDelivered = "purchase.delivered"
    case purchaseRefunded = "purchase.refunded"
    case refundReversed = "refund.reversed"
    case subscriptionRenewed = "subscription.renewed"
    case subscriptionExpired = "subscription.expired"
    case subscriptionInBillingRetry = "subscription.in_billing_retry"
    case subscriptionInGracePeriod = "subscription.in_grace_period"
    case subscriptionAutoRenewChanged = "subscription.auto_renew_changed"
    case ownershipTransferred = "ownership.transferred"
    case balanceChanged = "balance.changed"
    /// Added after the first types (docs/webhooks.md): support extended the renewal date (docs/support-acts.md).
    case subscriptionExtended = "subscription.extended"
    /// A person erased (docs/erasure.md): `data.subject` only.
    case userErased = "user.erased"
}
