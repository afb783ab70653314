import Crypto

/// The ledger's index key: look-ups by user id or app account token go through
/// HMAC-SHA256(this key, kind ‖ 0 ‖ value), so `subjects` finds a person without keeping the
/// value, and a dump without the key cannot test a guess against it.
public struct LookupKey: Sendable {
    /// The 32 bytes as stored (or wrapped) in `ledger_keys`.
    public let bytes: [UInt8]
    let key: SymmetricKey

    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
        key = SymmetricKey(data: bytes)
    }

    public static func random() -> LookupKey {
        // A subject key's bytes are 32 random ones; the two keys serve apart.
        let bytes = SubjectKey.random().bytes
        return LookupKey(validBytes: bytes)
    }

    private init(validBytes bytes: [UInt8]) {
        self.bytes = bytes
        key = SymmetricKey(data: bytes)
    }

    /// A user id's look-up, as the app sent it (ids are compared exactly, as everywhere).
    public func user(_ userId: String) -> [UInt8] {
        lookup("user", userId)
    }

    /// An app account token's look-up. Tokens are UUIDs, which Apple and clients write in either
    /// case: lowercased first, so each spelling finds the same person.
    public func token(_ token: String) -> [UInt8] {
        lookup("token", token.lowercased())
    }

    private func lookup(_ kind: String, _ value: String) -> [UInt8] {
        var mac = HMAC<SHA256>(key: key)
        mac.update(data: Array(kind.utf8))
        mac.update(data: [0])
        mac.update(data: Array(value.utf8))
        return Array(mac.finalize())
    }
}
