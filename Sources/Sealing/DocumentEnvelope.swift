/// A document sealed for a person (docs/erasure.md, "Documents"):
/// `PLSEAL1 ‖ subject ‖ IV ‖ AES-256-CTR ciphertext` (`Seal`). The IV is synthetic, as a
/// handle's is, so the same document sealed twice for one person is the same envelope: its
/// SHA-256 names it, and a retried submission cites the same document.
public enum DocumentEnvelope {
    static let magic = Array("PLSEAL1".utf8)
    /// `s` and 26 base32 digits.
    static let subjectCount = 27

    public static func seal(_ document: [UInt8], subject: SubjectID, key: SubjectKey) -> [UInt8] {
        magic + Array(subject.rawValue.utf8) + Seal.seal(document, field: .document, subject: subject, key: key)
    }

    /// The subject `stored` was sealed for; nil when it is not an envelope (a document kept as
    /// Apple or the app sent it: not personal, or recorded before erasure came).
    public static func subject(of stored: [UInt8]) -> SubjectID? {
        guard stored.count > magic.count + subjectCount, stored.starts(with: magic) else { return nil }
        let name = stored[magic.count..<(magic.count + subjectCount)]
        return SubjectID(Substring(decoding: name, as: UTF8.self))
    }

    /// The document `envelope` holds.
    public static func open(_ envelope: [UInt8], key: SubjectKey) throws(SealingError) -> [UInt8] {
        guard let subject = subject(of: envelope) else { throw .notSealed }
        return try Seal.open(envelope.dropFirst(magic.count + subjectCount), field: .document, subject: subject, key: key)
    }
}
