import Mustache

/// HTML escaping for everything the console writes: each template's `{{x}}` (through the
/// `CONSOLE_HTML` content type every template names first) and the charts it draws.
///
/// Byte by byte over UTF-8, not character by character: in Swift a quote followed by a
/// combining mark (U+0301) is one `Character`, which a per-character table does not match, so
/// Mustache's own escaper, and this one before, wrote `"` + U+0301 as a raw quote, closing the
/// attribute it stood in. Bytes also make it fast: a look-up page escapes every entry's event
/// data, and Mustache's escaper was half of that page's time (perf, 370 entries).
enum ConsoleHTML {
    static func escape(_ text: String) -> String {
        var text = text
        return text.withUTF8 { bytes -> String? in
            guard bytes.contains(where: needsEscape) else { return nil }
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count + bytes.count / 8)
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "&"): out.append(contentsOf: "&amp;".utf8)
                case UInt8(ascii: "<"): out.append(contentsOf: "&lt;".utf8)
                case UInt8(ascii: ">"): out.append(contentsOf: "&gt;".utf8)
                case UInt8(ascii: "\""): out.append(contentsOf: "&quot;".utf8)
                case UInt8(ascii: "'"): out.append(contentsOf: "&#39;".utf8)
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

    /// The content type's name, as each template's first tag names it.
    static let contentTypeName = "CONSOLE_HTML"

    /// Registered before the templates are read: Mustache looks content types up by name as it
    /// parses. Every registration is the same value, so registering again is harmless.
    static func registerContentType() {
        MustacheContentTypes.register(ContentType(), named: contentTypeName)
    }

    private struct ContentType: MustacheContentType {
        func escapeText(_ text: String) -> String { ConsoleHTML.escape(text) }
    }
}
