/// Text made safe for HTML, in a text node or a quoted attribute: `& < > " '` as entities. The
/// console's templates and charts (ConsoleHTML) and the ids the HTTP layer opens into a page
/// (HandleOpening) escape through this one function.
///
/// Byte by byte over UTF-8, not character by character: in Swift a quote followed by a
/// combining mark (U+0301) is one `Character`, which a per-character table does not match, so
/// Mustache's own escaper, and the console's before this one, wrote `"` + U+0301 as a raw quote,
/// closing the attribute it stood in. Bytes also make it fast: a look-up page escapes every
/// entry's event data, and Mustache's escaper was half of that page's time (perf, 370 entries).
public enum HTMLText {
    public static func escape(_ text: String) -> String {
        var text = text
        return text.withUTF8 { bytes -> String? in
            guard bytes.contains(where: needsEscape) else { return nil }
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count + bytes.count / 8)
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "&"): out += "&amp;".utf8
                case UInt8(ascii: "<"): out += "&lt;".utf8
                case UInt8(ascii: ">"): out += "&gt;".utf8
                case UInt8(ascii: "\""): out += "&quot;".utf8
                case UInt8(ascii: "'"): out += "&#39;".utf8
                default: out.append(byte)
                }
            }
            return String(decoding: out, as: UTF8.self)
        } ?? text
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "&") || byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "\"")
            || byte == UInt8(ascii: "'")
    }
}
