/// PostgreSQL array literals for binding a whole batch as one parameter per column
/// (`unnest($1::text[], ...)`), so a batch of any size is one statement with a fixed text.
/// The literal travels as a bound parameter, never inside the SQL text.
enum ArrayLiteral {
    static func text(_ values: [String?]) -> String {
        var out = "{"
        out.reserveCapacity(values.reduce(2) { $0 + ($1?.utf8.count ?? 4) + 3 })
        for (index, value) in values.enumerated() {
            if index > 0 { out.append(",") }
            guard let value else {
                out.append("NULL")
                continue
            }
            out.append("\"")
            for character in value.unicodeScalars {
                if character == "\"" || character == "\\" { out.append("\\") }
                out.unicodeScalars.append(character)
            }
            out.append("\"")
        }
        out.append("}")
        return out
    }

    static func integers<I: BinaryInteger>(_ values: [I?]) -> String {
        "{" + values.map { $0.map { String($0) } ?? "NULL" }.joined(separator: ",") + "}"
    }
}
