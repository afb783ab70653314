import Crypto

/// AES-256-GCM under a subject's key with a synthetic nonce: the first 12 bytes of
/// HMAC-SHA256(the key's nonce half, field ‖ 0 ‖ plaintext). The same plaintext sealed twice for
/// the same subject and field gives the same bytes, which what compares bytes relies on (a
/// retried append's payload, a retried receipt's document, a look-up by value); it reveals
/// equality under one subject's key and nothing else. The field and the subject are the
/// additional authenticated data.
enum Seal {
    static let nonceCount = 12
    static let tagCount = 16

    /// nonce ‖ ciphertext ‖ tag.
    static func seal(_ plaintext: [UInt8], field: SealedField, subject: SubjectID, key: SubjectKey) -> [UInt8] {
        var mac = HMAC<SHA256>(key: key.nonces)
        mac.update(data: Array(field.rawValue.utf8))
        mac.update(data: [0])
        mac.update(data: plaintext)
        let nonceBytes = Array(mac.finalize()).prefix(nonceCount)
        do {
            let box = try AES.GCM.seal(
                plaintext, using: key.encryption, nonce: try AES.GCM.Nonce(data: nonceBytes),
                authenticating: additionalData(field: field, subject: subject))
            return Array(nonceBytes) + Array(box.ciphertext) + Array(box.tag)
        } catch {
            // A 12-byte nonce and a 32-byte key are all AES-GCM can refuse; both are fixed here.
            preconditionFailure("AES-GCM refused a 12-byte nonce: \(error)")
        }
    }

    static func open(_ sealed: some Collection<UInt8>, field: SealedField, subject: SubjectID, key: SubjectKey) throws(SealingError) -> [UInt8] {
        let bytes = Array(sealed)
        guard bytes.count >= nonceCount + tagCount else { throw .notSealed }
        do {
            let box = try AES.GCM.SealedBox(
                nonce: try AES.GCM.Nonce(data: bytes[..<nonceCount]),
                ciphertext: bytes[nonceCount..<(bytes.count - tagCount)], tag: bytes[(bytes.count - tagCount)...])
            return Array(try AES.GCM.open(box, using: key.encryption, authenticating: additionalData(field: field, subject: subject)))
        } catch {
            throw .cannotOpen
        }
    }

    private static func additionalData(field: SealedField, subject: SubjectID) -> [UInt8] {
        Array("purchase-ledger 1 \(field.rawValue) \(subject.rawValue)".utf8)
    }
}
