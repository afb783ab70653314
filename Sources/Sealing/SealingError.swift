/// Why a sealed value or a wrapped key could not be read.
public enum SealingError: Error, Equatable, Sendable {
    /// The text or bytes are not of the sealed form at all.
    case notSealed
    /// Sealed under another subject, for another field, or altered: the synthetic IV does not hold.
    case cannotOpen
    /// `LEDGER_KEY_ENCRYPTION_KEY`'s file holds neither 32 bytes nor 64 hexadecimal digits.
    case badKeyEncryptionKey
}
