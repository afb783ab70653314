/// A client's `Idempotency-Key` (the payments convention): the same key again answers the
/// first result. Stored scoped to the caller and the route, so two clients' keys, or one
/// client's on two routes, never meet.
public struct IdempotencyKey: Sendable, Hashable {
    /// The key as the client sent it.
    public let text: String
    /// The key in the log's `idempotency_key` column.
    public let stored: String

    /// Nil unless `text` is 1 to 255 visible ASCII characters.
    public init?(_ text: String, caller: String, route: String) {
        guard (1...255).contains(text.utf8.count), text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else { return nil }
        self.text = text
        self.stored = "http:\(caller):\(route):\(text)"
    }
}
