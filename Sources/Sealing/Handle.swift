import Primitives

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the ledger holds in place of a personal value (a user id, an app account token, free
/// text about a person): `~1.<subject>.<base64url(nonce ‖ ciphertext ‖ tag)>`. The domain
/// compares handles as it compared the values, and only the edges open them; once the subject's
/// key is destroyed a handle reads as `erased:<subject>` (docs/erasure.md).
public enum Handle {
    static let prefix = "~1."

    /// `plaintext` sealed for `subject`: the same every time for the same subject, field and text.
    public static func seal(_ plaintext: String, field: SealedField, subject: SubjectID, key: SubjectKey) -> String {
        let sealed = Seal.seal(TokenBytes.encode(plaintext, field: field), field: field, subject: subject, key: key)
        return prefix + subject.rawValue + "." + Base64URL.encode(Data(sealed))
    }

    /// The subject a handle was sealed for; nil when `text` is not a handle (a value recorded
    /// before erasure came, held in clear).
    public static func subject(of text: String) -> SubjectID? {
        parts(of: text)?.subject
    }

    /// The value `handle` holds.
    public static func open(_ handle: String, field: SealedField, key: SubjectKey) throws(SealingError) -> String {
        guard let (subject, sealed) = parts(of: handle) else { throw .notSealed }
        return try TokenBytes.decode(try Seal.open(sealed, field: field, subject: subject, key: key), field: field)
    }

    /// The subject a handle names, read from its shape alone (nothing decoded, nothing opened):
    /// what the folds key a person by, for every event they replay.
    public static func subjectName(of text: String) -> Substring? {
        let utf8 = text.utf8
        guard utf8.count > prefix.utf8.count + 28, text.hasPrefix(prefix) else { return nil }
        let start = utf8.index(utf8.startIndex, offsetBy: prefix.utf8.count)
        let end = utf8.index(start, offsetBy: 27)
        guard utf8[end] == UInt8(ascii: "."), SubjectID(text[start..<end]) != nil else { return nil }
        return text[start..<end]
    }

    /// What a handle shows once its subject is erased.
    public static func erased(_ subject: SubjectID) -> String {
        "erased:" + subject.rawValue
    }

    /// The shape `subjectName` reads, and the sealed bytes after it decoded.
    private static func parts(of text: String) -> (subject: SubjectID, sealed: Data)? {
        guard let name = subjectName(of: text), let subject = SubjectID(name),
              let sealed = Base64URL.decode(text[text.utf8.index(after: name.endIndex)...])
        else { return nil }
        return (subject, sealed)
    }
}
