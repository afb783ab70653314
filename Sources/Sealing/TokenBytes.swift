#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a handle seals for a value: its UTF-8, except an app account token written as a
/// lowercase UUID (every one the ledger issues, and Apple's), which is sealed as its 16 bytes.
/// A token is on nearly every event of a purchase, and its handle was 117 characters sealed as
/// text (docs/benchmarks.md). A token's bytes start with a marker, so any other text a token
/// field holds still seals and opens exactly: 0 and the UUID's 16 bytes, or 1 and the text.
enum TokenBytes {
    static func encode(_ value: String, field: SealedField) -> [UInt8] {
        guard field == .appAccountToken else { return Array(value.utf8) }
        if let uuid = UUID(uuidString: value), uuid.uuidString.lowercased() == value {
            return withUnsafeBytes(of: uuid.uuid) { [0] + Array($0) }
        }
        return [1] + Array(value.utf8)
    }

    static func decode(_ bytes: [UInt8], field: SealedField) throws(SealingError) -> String {
        var text = bytes[...]
        if field == .appAccountToken {
            switch bytes.first {
            case 0 where bytes.count == 17:
                let uuid = UUID(uuid: (
                    bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                    bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15], bytes[16]))
                return uuid.uuidString.lowercased()
            case 1:
                text = bytes.dropFirst()
            default:
                throw .cannotOpen
            }
        }
        guard let value = String(validating: text, as: UTF8.self) else { throw .cannotOpen }
        return value
    }
}
