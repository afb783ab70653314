import Crypto
import CryptoExtras
import Primitives

/// Deterministic authenticated encryption under a subject's key, built as SIV (Rogaway and
/// Shrimpton's synthetic IV): the IV is the first 16 bytes of HMAC-SHA256(the key's nonce half,
/// "purchase-ledger 2 FIELD SUBJECT" ‖ 0 ‖ plaintext), and the plaintext is encrypted with
/// AES-256-CTR from that IV. Opening decrypts and recomputes the IV: it is the tag too, so a
/// changed byte, another field or another subject fails, and nothing else needs storing.
///
/// The same plaintext sealed twice for the same subject and field gives the same bytes, which
/// what compares bytes relies on (a retried append's payload, a retried receipt's document, a
/// look-up by value); it reveals equality under one subject's key and nothing else. AES-GCM
/// with a synthetic nonce, the first form, stored a 12-byte nonce and a 16-byte tag: every
/// handle was 16 characters longer, on every event that names a person (docs/benchmarks.md).
enum Seal {
    static let ivCount = 16

    /// IV ‖ ciphertext.
    static func seal(_ plaintext: [UInt8], field: SealedField, subject: SubjectID, key: SubjectKey) -> [UInt8] {
        let iv = syntheticIV(plaintext, field: field, subject: subject, key: key)
        do {
            return iv + Array(try AES._CTR.encrypt(plaintext, using: key.encryption, nonce: try AES._CTR.Nonce(nonceBytes: iv)))
        } catch {
            // A 16-byte counter block and a 32-byte key are all AES-CTR can refuse; both are fixed here.
            preconditionFailure("AES-CTR refused a 16-byte IV: \(error)")
        }
    }

    static func open(_ sealed: some Collection<UInt8>, field: SealedField, subject: SubjectID, key: SubjectKey) throws(SealingError) -> [UInt8] {
        let bytes = Array(sealed)
        guard bytes.count >= ivCount else { throw .notSealed }
        let iv = Array(bytes[..<ivCount])
        let plaintext: [UInt8]
        do {
            plaintext = Array(try AES._CTR.decrypt(bytes[ivCount...], using: key.encryption, nonce: try AES._CTR.Nonce(nonceBytes: iv)))
        } catch {
            throw .cannotOpen
        }
        guard ConstantTime.equal(syntheticIV(plaintext, field: field, subject: subject, key: key), iv) else { throw .cannotOpen }
        return plaintext
    }

    /// The field and the subject are authenticated with the plaintext: a token's sealed bytes
    /// cannot pass for a user id, nor one subject's for another's.
    private static func syntheticIV(_ plaintext: [UInt8], field: SealedField, subject: SubjectID, key: SubjectKey) -> [UInt8] {
        var mac = HMAC<SHA256>(key: key.nonces)
        mac.update(data: Array("purchase-ledger 2 \(field.rawValue) \(subject.rawValue)".utf8))
        mac.update(data: [0])
        mac.update(data: plaintext)
        return Array(Array(mac.finalize()).prefix(ivCount))
    }
}
