import Primitives

/// Handles inside text the ledger is about to show (an API answer, a webhook body, a timeline's
/// summary, a command's output): found by their shape, so every way out can open them in one
/// pass, whatever produced the text. A handle's characters (`~`, `.`, base32, base64url) need
/// no escaping in JSON, HTML or URLs, so a handle is found the same in all of them; what
/// replaces it is escaped for the text it goes into (`Escaping`).
public enum HandleText {
    /// Each handle in `bytes`, once.
    public static func handles(in bytes: [UInt8], outsideTags: Bool = false) -> Set<String> {
        var found = Set<String>()
        scan(bytes, outsideTags: outsideTags) { range in found.insert(String(decoding: bytes[range], as: UTF8.self)) }
        return found
    }

    /// `bytes` with each handle replaced by `replacement(handle)`; a handle it answers nil for
    /// is left as it is. `outsideTags`: HTML, whose tags are left alone. A handle in a link or a
    /// form's value stays a handle, which the console's look-ups take back; an id put there would
    /// need the URL's escaping, not the text's.
    public static func replacing(in bytes: [UInt8], outsideTags: Bool = false, _ replacement: (String) -> [UInt8]?) -> [UInt8] {
        var out: [UInt8] = []
        var copied = 0
        scan(bytes, outsideTags: outsideTags) { range in
            guard let with = replacement(String(decoding: bytes[range], as: UTF8.self)) else { return }
            if out.isEmpty { out.reserveCapacity(bytes.count) }
            out += bytes[copied..<range.lowerBound]
            out += with
            copied = range.upperBound
        }
        guard copied > 0 else { return bytes }
        out += bytes[copied...]
        return out
    }

    /// Calls `found` with the range of each handle: `~1.`, a subject (`s` and 26 base32
    /// digits), `.`, and base64url to the first character that is none.
    static func scan(_ bytes: [UInt8], outsideTags: Bool, _ found: (Range<Int>) -> Void) {
        let count = bytes.count
        var index = 0
        while index + 32 < count {
            if outsideTags, bytes[index] == UInt8(ascii: "<") {
                while index < count, bytes[index] != UInt8(ascii: ">") { index += 1 }
                continue
            }
            guard bytes[index] == UInt8(ascii: "~"), bytes[index + 1] == UInt8(ascii: "1"), bytes[index + 2] == UInt8(ascii: "."),
                  bytes[index + 3] == UInt8(ascii: "s")
            else {
                index += 1
                continue
            }
            let subjectEnd = index + 4 + 26
            guard subjectEnd < count, bytes[(index + 4)..<subjectEnd].allSatisfy(isBase32), bytes[subjectEnd] == UInt8(ascii: ".") else {
                index += 1
                continue
            }
            var end = subjectEnd + 1
            while end < count, isBase64URL(bytes[end]) { end += 1 }
            // Sealed bytes are at least the synthetic IV: 16 bytes, 22 characters.
            if end - (subjectEnd + 1) >= (Seal.ivCount * 4 + 2) / 3 {
                found(index..<end)
                index = end
            } else {
                index += 1
            }
        }
    }

    private static func isBase32(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "2")...UInt8(ascii: "7")).contains(byte)
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }
}

/// How an opened value is written into the text a handle stood in.
public enum Escaping: Sendable {
    /// Inside a JSON string: quotes, backslashes and control characters escaped.
    case json
    /// HTML text or a quoted attribute: `& < > " '` as entities.
    case html
    /// Plain text, as it is.
    case none

    public func escape(_ text: String) -> [UInt8] {
        switch self {
        case .none:
            return Array(text.utf8)
        case .html:
            return Array(HTMLText.escape(text).utf8)
        case .json:
            var out: [UInt8] = []
            JSONValue.writeStringContent(text, into: &out)
            return out
        }
    }
}
