import Crypto

/// A subject's own key: 32 random bytes. Erasure destroys it, and with it every value sealed
/// under it. Two keys are derived from it, so the same bytes never serve two purposes: one
/// encrypts (AES-256-CTR), one draws the synthetic IVs (HMAC-SHA256).
public struct SubjectKey: Sendable {
    /// The 32 bytes as stored (or wrapped) in `subjects.key`.
    public let bytes: [UInt8]
    let encryption: SymmetricKey
    let nonces: SymmetricKey

    /// The key held in `bytes`; nil unless they are 32.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.init(valid: bytes)
    }

    private init(valid bytes: [UInt8]) {
        self.bytes = bytes
        let material = SymmetricKey(data: bytes)
        encryption = HKDF<SHA256>.deriveKey(inputKeyMaterial: material, info: Array("purchase-ledger seal".utf8), outputByteCount: 32)
        nonces = HKDF<SHA256>.deriveKey(inputKeyMaterial: material, info: Array("purchase-ledger nonce".utf8), outputByteCount: 32)
    }

    /// A new key, from the system's secure generator.
    public static func random() -> SubjectKey {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for _ in 0..<4 { withUnsafeBytes(of: generator.next() as UInt64) { bytes += $0 } }
        return SubjectKey(valid: bytes)
    }
}
