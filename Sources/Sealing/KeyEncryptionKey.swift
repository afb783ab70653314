import Crypto
import Primitives

/// `LEDGER_KEY_ENCRYPTION_KEY`'s key: when set, every subject key and the index key are stored
/// wrapped under it, so a dump of the database alone reads no one. It is kept outside the
/// database (a file); losing it loses the people's data, never the money (docs/erasure.md).
public struct KeyEncryptionKey: Sendable {
    let key: SymmetricKey
    /// The first 8 bytes of the key's SHA-256 in hex: stored beside each wrapped key, so a
    /// different file is told apart from a damaged key.
    public let id: String

    /// The key a file holds: 32 bytes as they are, or 64 hexadecimal digits (a newline allowed).
    public init(fileContents: [UInt8]) throws(SealingError) {
        let bytes: [UInt8]
        if fileContents.count == 32 {
            bytes = fileContents
        } else {
            let blank: Set<UInt8> = [UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t")]
            var digits = fileContents[...]
            while let last = digits.last, blank.contains(last) { digits.removeLast() }
            while let first = digits.first, blank.contains(first) { digits.removeFirst() }
            guard digits.count == 64, let decoded = Hex.decode(digits: digits) else { throw .badKeyEncryptionKey }
            bytes = decoded
        }
        key = SymmetricKey(data: bytes)
        id = Hex.encode(SHA256.hash(data: bytes).prefix(8))
    }

    /// `secret` (a subject's or the index key's 32 bytes) sealed under this key: random nonce ‖
    /// ciphertext ‖ tag. Nothing compares wrapped keys, so the nonce need not be synthetic.
    public func wrap(_ secret: [UInt8]) -> [UInt8] {
        do {
            let box = try AES.GCM.seal(secret, using: key, authenticating: Self.additionalData)
            return Array(box.nonce) + Array(box.ciphertext) + Array(box.tag)
        } catch {
            // AES-GCM refuses only a bad key or nonce size; both are fixed here.
            preconditionFailure("AES-GCM refused to wrap a key: \(error)")
        }
    }

    public func unwrap(_ wrapped: [UInt8]) throws(SealingError) -> [UInt8] {
        guard wrapped.count > 28 else { throw .notSealed }
        do {
            let box = try AES.GCM.SealedBox(
                nonce: try AES.GCM.Nonce(data: wrapped[..<12]), ciphertext: wrapped[12..<(wrapped.count - 16)],
                tag: wrapped[(wrapped.count - 16)...])
            return Array(try AES.GCM.open(box, using: key, authenticating: Self.additionalData))
        } catch {
            throw .cannotOpen
        }
    }

    private static let additionalData = Array("purchase-ledger key wrap 1".utf8)
}
