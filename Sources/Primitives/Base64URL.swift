#if canImport(FoundationEssentials)
// Foundation's core alone (no ICU): `Date`, `Data` and `JSONEncoder` are all this module takes.
import FoundationEssentials
#else
import Foundation
#endif

/// base64url without padding (RFC 7515 §2), as JWS segments use it. Mapped byte by byte:
/// `replacingOccurrences` goes through CFString, slow for every segment the simulator signs
/// (docs/benchmarks.md, 'Why the code is shaped so').
public enum Base64URL {
    public static func encode(_ data: Data) -> String {
        var out: [UInt8] = []
        let base64 = data.base64EncodedData()
        out.reserveCapacity(base64.count)
        for byte in base64 {
            switch byte {
            case UInt8(ascii: "+"): out.append(UInt8(ascii: "-"))
            case UInt8(ascii: "/"): out.append(UInt8(ascii: "_"))
            case UInt8(ascii: "="): continue
            default: out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of `text`; nil when it is not base64url without padding.
    public static func decode(_ text: some StringProtocol) -> Data? {
        var base64: [UInt8] = []
        base64.reserveCapacity(text.utf8.count + 3)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "-"): base64.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): base64.append(UInt8(ascii: "/"))
            case UInt8(ascii: "="): return nil
            default: base64.append(byte)
            }
        }
        while base64.count % 4 != 0 { base64.append(UInt8(ascii: "=")) }
        return Data(base64Encoded: Data(base64))
    }
}
