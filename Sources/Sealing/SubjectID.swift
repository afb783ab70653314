/// A person as the ledger knows them from erasure's release on (docs/erasure.md): 128 random
/// bits written `s` and 26 lowercase base32 digits. It names nothing about the person, so it may
/// sit where the chain keeps it for ever: stream ids, idempotency keys, the erasure's own event.
public struct SubjectID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// `text` when it is a subject's id; nil otherwise.
    public init?(_ text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard bytes.count == 27, bytes[0] == UInt8(ascii: "s"), bytes.dropFirst().allSatisfy(Self.isDigit) else { return nil }
        rawValue = String(text)
    }

    private init(validated: String) {
        rawValue = validated
    }

    /// A new subject, from the system's secure generator.
    public static func random() -> SubjectID {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    static func random(using generator: inout some RandomNumberGenerator) -> SubjectID {
        var bits = (UInt128(generator.next() as UInt64) << 64) | UInt128(generator.next() as UInt64)
        var digits = [UInt8](repeating: 0, count: 26)
        // 26 digits of 5 bits hold 130: the first digit carries the top 3 bits only.
        for index in stride(from: 25, through: 0, by: -1) {
            digits[index] = alphabet[Int(bits & 31)]
            bits >>= 5
        }
        return SubjectID(validated: "s" + String(decoding: digits, as: UTF8.self))
    }

    public var description: String { rawValue }

    /// RFC 4648's base32 alphabet in lowercase: no padding, no digits 0, 1, 8 or 9 to misread.
    static let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "2")...UInt8(ascii: "7")).contains(byte)
    }
}
