/// PostgreSQL array literals for binding a whole batch as one parameter per column
/// (`unnest($1::text[], ...)`), so a batch of any size is one statement with a fixed text.
/// The literal travels as a bound parameter, never inside the SQL text.
enum ArrayLiteral {
    /// Built byte by byte: quotes and backslashes are ASCII, so escaping them in UTF-8 leaves
    /// every other character as it is (a per-character String build showed up in profiles).
    static func text(_ values: [String?]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(values.reduce(2) { $0 + ($1?.utf8.count ?? 4) + 3 })
        out.append(UInt8(ascii: "{"))
        for (index, value) in values.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            guard let value else {
                out.append(contentsOf: "NULL".utf8)
                continue
            }
            out.append(UInt8(ascii: "\""))
            for byte in value.utf8 {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { out.append(UInt8(ascii: "\\")) }
                out.append(byte)
            }
            out.append(UInt8(ascii: "\""))
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    static func integers<I: BinaryInteger>(_ values: [I?]) -> String {
        "{" + values.map { $0.map { String($0) } ?? "NULL" }.joined(separator: ",") + "}"
    }
}
