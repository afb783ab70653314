/// A Swift file's text with its comments blanked, so that the rules read code and string
/// literals (where SQL lives) but never prose: "FROM events" in a doc comment is not SQL.
///
/// Comments are replaced by spaces with their newlines kept, so an offset in `code` is on the
/// same line as in the file. String literals are followed (escapes, `"""`, raw `#"…"#`, and
/// interpolations holding strings of their own), so that `//` inside "http://…" stays code.
struct SwiftSource: Sendable {
    /// Relative to the repository's root: `Sources/EventStore/Migrator.swift`.
    let path: String
    /// The text, comments blanked.
    let code: String

    init(path: String, text: String) {
        self.path = path
        self.code = Self.blankingComments(text)
    }

    /// The 1-based line of `index` in `code`.
    func line(of index: String.Index) -> Int {
        code[..<index].utf8.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
    }

    /// The lines of `code`, 1-based, for rules that read one line at a time.
    var lines: [(number: Int, text: Substring)] {
        code.split(separator: "\n", omittingEmptySubsequences: false).enumerated().map { ($0.offset + 1, $0.element) }
    }

    // MARK: - The lexer

    private enum Context {
        /// Code; inside an interpolation, `depth` counts its open parentheses.
        case code(interpolationDepth: Int?)
        case string(multiline: Bool, hashes: Int)
    }

    private static let slash = UInt8(ascii: "/"), star = UInt8(ascii: "*"), quote = UInt8(ascii: "\"")
    private static let hash = UInt8(ascii: "#"), backslash = UInt8(ascii: "\\"), newline = UInt8(ascii: "\n")
    private static let open = UInt8(ascii: "("), close = UInt8(ascii: ")"), space = UInt8(ascii: " ")

    static func blankingComments(_ text: String) -> String {
        var bytes = Array(text.utf8)
        var stack: [Context] = [.code(interpolationDepth: nil)]
        var i = 0

        func at(_ offset: Int) -> UInt8? { i + offset < bytes.count ? bytes[i + offset] : nil }
        func blank(_ range: Range<Int>) {
            for j in range where bytes[j] != newline { bytes[j] = space }
        }
        /// Whether `"` (or `"""`) then `hashes` `#` start at `i`.
        func closes(multiline: Bool, hashes: Int) -> Int? {
            let quotes = multiline ? 3 : 1
            for q in 0..<quotes where at(q) != quote { return nil }
            for h in 0..<hashes where at(quotes + h) != hash { return nil }
            return quotes + hashes
        }

        while i < bytes.count {
            guard let context = stack.last else { break }
            switch context {
            case .code(let depth):
                let byte = bytes[i]
                if byte == slash, at(1) == slash {
                    let start = i
                    while i < bytes.count, bytes[i] != newline { i += 1 }
                    blank(start..<i)
                } else if byte == slash, at(1) == star {
                    // Block comments nest in Swift.
                    let start = i
                    var level = 0
                    repeat {
                        if at(0) == slash, at(1) == star { level += 1; i += 2 }
                        else if at(0) == star, at(1) == slash { level -= 1; i += 2 }
                        else { i += 1 }
                    } while level > 0 && i < bytes.count
                    blank(start..<min(i, bytes.count))
                } else if byte == hash || byte == quote {
                    var hashes = 0
                    while at(hashes) == hash { hashes += 1 }
                    guard at(hashes) == quote else { i += max(hashes, 1); continue }
                    let multiline = at(hashes + 1) == quote && at(hashes + 2) == quote
                    i += hashes + (multiline ? 3 : 1)
                    stack.append(.string(multiline: multiline, hashes: hashes))
                } else if let depth, byte == open {
                    stack[stack.count - 1] = .code(interpolationDepth: depth + 1)
                    i += 1
                } else if let depth, byte == close {
                    i += 1
                    if depth == 1 { stack.removeLast() } else { stack[stack.count - 1] = .code(interpolationDepth: depth - 1) }
                } else {
                    i += 1
                }
            case .string(let multiline, let hashes):
                if let length = closes(multiline: multiline, hashes: hashes) {
                    i += length
                    stack.removeLast()
                } else if bytes[i] == backslash, (0..<hashes).allSatisfy({ at(1 + $0) == hash }) {
                    if at(1 + hashes) == open {
                        i += 2 + hashes
                        stack.append(.code(interpolationDepth: 1))
                    } else {
                        i += 2 + hashes
                    }
                } else if bytes[i] == newline, !multiline {
                    // An unterminated one-line string: the compiler refuses it; do not let it
                    // swallow the rest of the file.
                    stack.removeLast()
                    i += 1
                } else {
                    i += 1
                }
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
