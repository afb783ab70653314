import Primitives
import Testing

@testable import Sealing

@Suite struct KeyEncryptionKeyTests {
    let raw: [UInt8] = (0..<32).map { UInt8($0 * 7 % 256) }

    @Test func aFileOfThirtyTwoBytesOrSixtyFourHexDigitsIsTheSameKey() throws {
        let fromBytes = try KeyEncryptionKey(fileContents: raw)
        let fromHex = try KeyEncryptionKey(fileContents: Array((Hex.encode(raw) + "\n").utf8))
        #expect(fromBytes.id == fromHex.id)
        #expect(fromBytes.id.utf8.count == 16)
        let secret = SubjectKey.random().bytes
        #expect(try fromHex.unwrap(fromBytes.wrap(secret)) == secret)
    }

    @Test(arguments: [[UInt8](), Array("not a key".utf8), Array(String(repeating: "g", count: 64).utf8), Array(repeating: 1, count: 33)])
    func anythingElseIsRefused(_ contents: [UInt8]) {
        #expect(throws: SealingError.badKeyEncryptionKey) { try KeyEncryptionKey(fileContents: contents) }
    }

    @Test func aWrappedKeyHidesItsBytesAndOpensUnderItsKeyOnly() throws {
        let kek = try KeyEncryptionKey(fileContents: raw)
        let secret = SubjectKey.random().bytes
        let wrapped = kek.wrap(secret)
        #expect(wrapped.count == 60)
        #expect(!wrapped.starts(with: secret) && wrapped[12..<44].elementsEqual(secret) == false)
        let other = try KeyEncryptionKey(fileContents: Array(repeating: 9, count: 32))
        #expect(other.id != kek.id)
        #expect(throws: SealingError.cannotOpen) { try other.unwrap(wrapped) }
    }
}
