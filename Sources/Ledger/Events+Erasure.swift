/// A person erased (docs/erasure.md): their subject's key is destroyed, so every handle sealed
/// for them (their id in every event, read model and webhook body) opens to `erased:SUBJECT`.
/// Names the subject, never the id; the actor is in the event's metadata.
public struct UserErased: LedgerEventPayload {
    public static let eventType = "UserErased"
    /// The subject (`s` and 26 base32 digits): opaque, it names nothing about the person.
    public var subject: String
    /// Why, as support gave it (refused when it names the person).
    public var reason: String
    /// Milliseconds since 1970, UTC.
    public var erasedAtMs: Int64

    public init(subject: String, reason: String, erasedAtMs: Int64) {
        self.subject = subject
        self.reason = reason
        self.erasedAtMs = erasedAtMs
    }
}

/// From here on the ledger seals the people it meets (docs/erasure.md). `serve` records it when
/// it starts on an empty log; a log recorded by an earlier release gets it from `purchase-ledger
/// erasure begin`, once no server of that release runs: those servers read people by their ids in
/// clear, and would not find one sealed by this release.
public struct ErasureBegan: LedgerEventPayload {
    public static let eventType = "ErasureBegan"
    /// Milliseconds since 1970, UTC.
    public var beganAtMs: Int64

    public init(beganAtMs: Int64) {
        self.beganAtMs = beganAtMs
    }
}
