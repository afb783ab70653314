/// A one-dimensional array parameter in PostgreSQL's array text form (`{"a","b",NULL}`), so a
/// whole batch binds as one parameter per column (`unnest(\(PostgresArray(ids))::uuid[], ...)`)
/// and the statement text stays the same whatever the batch size.
///
/// Elements travel as their text forms, untyped: cast the parameter in SQL (`::text[]`,
/// `::jsonb[]`, `::bigint[]`), which is what gives it its element type.
public struct PostgresArray: PostgresEncodable, Sendable, Hashable {
    /// The literal's UTF-8 bytes.
    public let literal: [UInt8]

    public static var postgresType: PostgresType { .unspecified }
    public var postgresData: PostgresData { PostgresData(type: .unspecified, format: .text, bytes: literal) }

    /// Text elements, each quoted; nil is NULL. Built as UTF-8 bytes: quotes and backslashes
    /// are ASCII, so escaping them leaves every other character as it is.
    public init(_ values: [String?]) {
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
        literal = out
    }

    /// Integer elements; nil is NULL.
    public init<I: BinaryInteger>(_ values: [I?]) {
        literal = Array(("{" + values.map { $0.map { String($0) } ?? "NULL" }.joined(separator: ",") + "}").utf8)
    }

    /// Integer elements.
    public init<I: BinaryInteger>(_ values: [I]) {
        self.init(values.map { Optional($0) })
    }
}
