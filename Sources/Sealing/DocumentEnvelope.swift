/// A personal document as stored: `PLSEAL1` ‖ 0 ‖ the subject's 27 characters ‖ nonce ‖
/// ciphertext ‖ tag. Sealed with the synthetic nonce, so the same document for the same subject
/// is the same envelope, and its sha256 (the document's name in `documents`) does not move.
public enum DocumentEnvelope {
    static let magic: [UInt8] = Array("PLSEAL1".utf8) + [0]
    static let headerCount = magic.count + 27

    public static func seal(_ document: [UInt8], subject: SubjectID, key: SubjectKey) -> [UInt8] {
        magic + Array(subject.rawValue.utf8) + Seal.seal(document, field: .document, subject: subject, key: key)
    }

    /// The subject `stored` is sealed for; nil for a document kept in clear.
    public static func subject(of stored: [UInt8]) -> SubjectID? {
        guard stored.count > headerCount, stored.starts(with: magic) else { return nil }
        return SubjectID(Substring(decoding: stored[magic.count..<headerCount], as: UTF8.self))
    }

    /// The document's own bytes.
    public static func open(_ stored: [UInt8], key: SubjectKey) throws(SealingError) -> [UInt8] {
        guard let subject = subject(of: stored) else { throw .notSealed }
        return try Seal.open(stored[headerCount...], field: .document, subject: subject, key: key)
    }
}
