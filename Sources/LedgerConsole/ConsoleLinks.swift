/// The console's links, built here only: every id is percent-encoded for its place (a path
/// segment or a query value) before a template puts it in an `href`. Mustache escapes HTML, not
/// URLs: an id holding `#`, `?`, `&`, `%` or `/` would otherwise change where the link goes.
/// Templates take links as ready values named `href` or `…Href`, never build them.
enum ConsoleLinks {
    /// The look-up of `id`, shown as `kind` (`user`, `order`, `transaction`) when given; `after`,
    /// the position of an act just recorded, makes the page wait for that act and no more.
    static func lookup(_ id: String, as kind: String? = nil, before position: Int64? = nil, after recorded: Int64? = nil) -> String {
        "/console/lookup" + query(
            [("q", id)] + (kind.map { [("as", $0)] } ?? []) + (position.map { [("before", String($0))] } ?? [])
                + (recorded.map { [("after", String($0))] } ?? []))
    }

    /// A stored document's page (its sha256 name).
    static func document(_ sha256: String) -> String { "/console/documents/" + pathSegment(sha256) }

    /// An imported App Store Connect report's reconciliation page.
    static func reconciliation(_ sha256: String) -> String { "/console/reconciliation/" + pathSegment(sha256) }

    /// `?name=value&…`, each part encoded; empty for no pairs.
    static func query(_ pairs: [(String, String)]) -> String {
        pairs.isEmpty ? "" : "?" + pairs.map { queryValue($0.0) + "=" + queryValue($0.1) }.joined(separator: "&")
    }

    /// `text` as one path segment: everything but RFC 3986's unreserved characters encoded, so
    /// `/`, `?`, `#` and `%` stay inside the segment.
    static func pathSegment(_ text: String) -> String { percentEncoded(text) }

    /// `text` as a query name or value: everything but the unreserved characters encoded, `&`,
    /// `=`, `+` and `#` included (a `+` would read back as a space in some decoders).
    static func queryValue(_ text: String) -> String { percentEncoded(text) }

    /// UTF-8 bytes outside `A–Z a–z 0–9 - . _ ~` as `%XX` (upper-case hex).
    private static func percentEncoded(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
