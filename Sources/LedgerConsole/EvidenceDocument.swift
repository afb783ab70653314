import AppStore
import Foundation
import Primitives

/// A stored document shown to a person: JSON pretty-printed with sorted keys, a JWS split into
/// its decoded header and payload, a receipt described; secrets masked (the shared secret that
/// v1 notifications and verifyReceipt requests carry) and long base64 blobs shortened, so a
/// support screen never shows a credential and stays readable. The bytes themselves are what
/// the chain and `verify` check; the page shows their sha256 beside.
struct EvidenceDocument {
    struct Section { var title: String; var text: String }

    var kind: String
    var sections: [Section]

    /// Keys whose values are credentials, never shown.
    static let secretKeys: Set<String> = ["password", "shared_secret", "sharedSecret", "app_specific_shared_secret"]
    /// Strings longer than this (receipts, signed payloads inside bodies) are shortened.
    static let longString = 160

    init(bytes: [UInt8]) {
        if let json = try? JSONDecoder().decode(JSONValue.self, from: Data(bytes)) {
            kind = "JSON"
            var sections = [Section(title: "Body", text: Self.pretty(json))]
            // A v2 notification or signed item inside: show what it says, decoded.
            for (key, jws) in Self.signedStrings(in: json).prefix(6) {
                sections += Self.jwsSections(jws, label: key)
            }
            self.sections = sections
        } else if let text = String(bytes: bytes, encoding: .utf8), text.split(separator: ".").count == 3, !text.contains(" ") {
            kind = "signed JWS"
            sections = Self.jwsSections(text.trimmingCharacters(in: .whitespacesAndNewlines), label: "JWS")
        } else if let text = String(bytes: bytes, encoding: .utf8), Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)) != nil {
            kind = "base64 receipt"
            sections = [Section(title: "Receipt", text: "base64, \(text.count) characters:\n" + Self.shorten(text))]
        } else if let text = String(bytes: bytes, encoding: .utf8) {
            kind = "text"
            sections = [Section(title: "Text", text: text.count > 20_000 ? String(text.prefix(20_000)) + "\n… (\(text.count) characters)" : text)]
        } else {
            kind = "binary"
            sections = [Section(title: "Bytes", text: "\(bytes.count) bytes that are not text")]
        }
    }

    static func jwsSections(_ jws: String, label: String) -> [Section] {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return [] }
        var sections: [Section] = []
        for (index, title) in [(0, "header"), (1, "payload")] {
            guard let data = Base64URL.decode(String(parts[index])), let json = try? JSONDecoder().decode(JSONValue.self, from: data) else { continue }
            var value = json
            if index == 0, case .object(var header) = value, case .array(let chain)? = header["x5c"] {
                header["x5c"] = .string("\(chain.count) certificates (checked against Apple's root when recorded)")
                value = .object(header)
            }
            sections.append(Section(title: "\(label) \(title), decoded", text: pretty(value)))
        }
        return sections
    }

    /// Pretty JSON, sorted keys, secrets masked, long strings shortened.
    static func pretty(_ value: JSONValue) -> String {
        // The encoder's bytes without an encoder per entry (JSONValue+SortedCompact).
        String(decoding: masked(value).sortedPrettyJSON(), as: UTF8.self)
    }

    static func masked(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let fields):
            var out: [String: JSONValue] = [:]
            for (key, field) in fields {
                out[key] = secretKeys.contains(key) ? .string("•••• masked") : masked(field)
            }
            return .object(out)
        case .array(let items): return .array(items.map(masked))
        case .string(let text) where text.count > longString: return .string(shorten(text))
        default: return value
        }
    }

    static func shorten(_ text: String) -> String {
        text.count > longString ? String(text.prefix(60)) + "… (\(text.count) characters)" : text
    }

    /// Strings inside a body that are compact JWS (`signedPayload`, `signedTransactionInfo`…).
    static func signedStrings(in value: JSONValue, key: String = "") -> [(String, String)] {
        switch value {
        case .object(let fields): return fields.sorted { $0.key < $1.key }.flatMap { signedStrings(in: $0.value, key: $0.key) }
        case .array(let items): return items.flatMap { signedStrings(in: $0, key: key) }
        case .string(let text) where text.hasPrefix("eyJ") && text.split(separator: ".").count == 3: return [(key, text)]
        default: return []
        }
    }

    /// Whether a key names a document's hash (`sha256`, `body_sha256`…), compared as bytes: the
    /// look-up asks for every key of every row, and both Foundation's `contains` and the standard
    /// library's generic `firstRange(of:)` showed in its profile.
    static func mentionsSHA256(_ key: String) -> Bool {
        let bytes = key.utf8
        var start = bytes.startIndex
        while let end = bytes.index(start, offsetBy: 6, limitedBy: bytes.endIndex) {
            if bytes[start..<end].elementsEqual("sha256".utf8) { return true }
            start = bytes.index(after: start)
        }
        return false
    }

    /// Whether `text` can name a stored document (or an imported report): a sha256 as 64 hex
    /// digits. Bytes, not Characters: every look-up row asks, and `Character.isHexDigit` also
    /// takes fullwidth digits, which no name holds.
    static func isDocumentName(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { byte in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
        }
    }

    /// The documents an event cites: every `…sha256…` field holding 64 hex digits.
    static func documentNames(in value: JSONValue) -> [String] {
        func hex(_ v: JSONValue) -> [String] {
            switch v {
            case .string(let s) where isDocumentName(s): [s]
            case .array(let items): items.flatMap(hex)
            default: []
            }
        }
        guard case .object(let fields) = value else { return [] }
        return fields.sorted { $0.key < $1.key }.flatMap { key, field -> [String] in
            if mentionsSHA256(key) { return hex(field) }
            return documentNames(in: field)
        }
    }
}
