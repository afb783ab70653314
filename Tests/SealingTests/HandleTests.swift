import Testing

@testable import Sealing

@Suite struct HandleTests {
    let subject = SubjectID.random()
    let key = SubjectKey.random()

    @Test func aHandleOpensToItsValueAndNamesItsSubject() throws {
        let handle = Handle.seal("alice@example.com", field: .userId, subject: subject, key: key)
        #expect(handle.hasPrefix("~1.\(subject.rawValue)."))
        #expect(!handle.contains("alice"))
        #expect(Handle.subject(of: handle) == subject)
        #expect(try Handle.open(handle, field: .userId, key: key) == "alice@example.com")
    }

    @Test func theSameValueSealsToTheSameHandleAndAnotherValueToAnother() {
        let first = Handle.seal("user-1", field: .userId, subject: subject, key: key)
        #expect(Handle.seal("user-1", field: .userId, subject: subject, key: key) == first)
        #expect(Handle.seal("user-2", field: .userId, subject: subject, key: key) != first)
        // The same text as another field, or under another subject's key, seals apart.
        #expect(Handle.seal("user-1", field: .text, subject: subject, key: key) != first)
        #expect(Handle.seal("user-1", field: .userId, subject: .random(), key: .random()) != first)
    }

    @Test func anotherKeyAnotherFieldOrAnAlteredHandleCannotOpen() {
        let handle = Handle.seal("user-1", field: .userId, subject: subject, key: key)
        #expect(throws: SealingError.cannotOpen) { try Handle.open(handle, field: .userId, key: .random()) }
        #expect(throws: SealingError.cannotOpen) { try Handle.open(handle, field: .appAccountToken, key: key) }
        // Another subject's id put in front of the same sealed bytes: the subject is authenticated.
        let moved = "~1.\(SubjectID.random().rawValue)." + handle.split(separator: ".").last!
        #expect(throws: SealingError.cannotOpen) { try Handle.open(moved, field: .userId, key: key) }
        var altered = Array(handle.utf8)
        altered[altered.count - 3] = altered[altered.count - 3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: SealingError.cannotOpen) { try Handle.open(String(decoding: altered, as: UTF8.self), field: .userId, key: key) }
    }

    @Test(arguments: ["user-1", "~1.", "~1.snot-a-subject.AAAA", "~1.\(SubjectID.random().rawValue)", "erased:s"])
    func textThatIsNoHandleIsNotOne(_ text: String) {
        #expect(Handle.subject(of: text) == nil)
        #expect(throws: SealingError.notSealed) { try Handle.open(text, field: .userId, key: key) }
    }

    @Test func aHandlesSubjectIsReadFromItsShape() {
        let handle = Handle.seal("user-1", field: .userId, subject: subject, key: key)
        #expect(Handle.subjectName(of: handle) == Substring(subject.rawValue))
        // Nothing but the shape: an id that is no handle names no subject, however it begins.
        for text in ["user-1", "~1.", "~1.\(subject.rawValue)", "~1.\(subject.rawValue)x.AAAA", "~1.snot-a-subject-but-27-chars.AAAA", "erased:\(subject.rawValue)"] {
            #expect(Handle.subjectName(of: text) == nil, "\(text)")
        }
    }

    @Test func aTokenSealsAsItsSixteenBytesAndOpensExactlyAsGiven() throws {
        let token = "7e3fbb2c-4b9c-4d9e-8f1a-2b3c4d5e6f70"
        let handle = Handle.seal(token, field: .appAccountToken, subject: subject, key: key)
        #expect(try Handle.open(handle, field: .appAccountToken, key: key) == token)
        // ~1. subject . base64url(16-byte IV ‖ marker ‖ 16 bytes): 75 characters, where the
        // token's text sealed with GCM's nonce and tag made 117.
        #expect(handle.count == 3 + 27 + 1 + 44)
        // Any other text in a token field is sealed as text, and opens as it was given.
        for other in [token.uppercased(), "not-a-uuid", "", String(repeating: "x", count: 16)] {
            let sealed = Handle.seal(other, field: .appAccountToken, subject: subject, key: key)
            #expect(try Handle.open(sealed, field: .appAccountToken, key: key) == other)
        }
        // A user id shaped like a token stays text: only the token field packs.
        let asUser = Handle.seal(token, field: .userId, subject: subject, key: key)
        #expect(try Handle.open(asUser, field: .userId, key: key) == token)
        #expect(throws: SealingError.cannotOpen) { try Handle.open(asUser, field: .appAccountToken, key: key) }
    }

    @Test func aSealIsItsIVAndCiphertextOnly() throws {
        let sealed = Seal.seal(Array("user-1".utf8), field: .userId, subject: subject, key: key)
        #expect(sealed.count == Seal.ivCount + 6)
        #expect(throws: SealingError.notSealed) { try Seal.open(sealed.prefix(Seal.ivCount - 1), field: .userId, subject: subject, key: key) }
        // Every byte counts: one changed anywhere, IV or ciphertext, and it does not open.
        for index in sealed.indices {
            var altered = sealed
            altered[index] ^= 0x01
            #expect(throws: SealingError.cannotOpen) { try Seal.open(altered, field: .userId, subject: subject, key: key) }
        }
    }

    @Test func aLongIdSealsWhole() throws {
        let long = String(repeating: "é", count: 200)
        let handle = Handle.seal(long, field: .userId, subject: subject, key: key)
        #expect(try Handle.open(handle, field: .userId, key: key) == long)
    }

    @Test func anErasedHandleShowsItsSubjectOnly() {
        #expect(Handle.erased(subject) == "erased:\(subject.rawValue)")
    }
}
