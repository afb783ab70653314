import Foundation

/// A one-dimensional array parameter, so a whole batch binds as one parameter per column
/// (`unnest(\(PostgresArray(ids))::uuid[], ...)`) and the statement text stays the same
/// whatever the batch size.
///
/// Sent in PostgreSQL's binary array format (what `array_recv` reads), typed by its Swift
/// elements: `text[]`, `uuid[]`, `jsonb[]` or `int8[]`. The text form (`{"a","b",NULL}`) would
/// make the server run `array_in` over every quoted, escaped element of every append
/// (docs/benchmarks.md, 'Why the code is shaped so'). A cast in SQL (`::int[]`) still converts to
/// another array type.
public struct PostgresArray: PostgresEncodable, Sendable, Hashable {
    public let postgresData: PostgresData

    /// Text elements; nil is NULL.
    public init(_ values: [String?]) {
        self.init(element: .text, array: Self.textArray, values.map { $0.map { Array($0.utf8) } })
    }

    /// UUID elements, 16 bytes each; nil is NULL.
    public init(_ values: [UUID?]) {
        self.init(element: .uuid, array: Self.uuidArray, values.map { value in
            value.map { uuid in withUnsafeBytes(of: uuid.uuid) { Array($0) } }
        })
    }

    /// jsonb elements (binary jsonb is a version byte, 1, then the JSON text); nil is NULL.
    public init(_ values: [JSONB?]) {
        self.init(element: .jsonb, array: Self.jsonbArray, values.map { $0.map { [1] + $0.bytes } })
    }

    /// Integer elements as `int8`; nil is NULL. Every value must fit in 64 bits.
    public init<I: BinaryInteger>(_ values: [I?]) {
        self.init(element: .int8, array: Self.int8Array, values.map { value in
            value.map { integer in withUnsafeBytes(of: Int64(integer).bigEndian) { Array($0) } }
        })
    }

    /// Integer elements as `int8`.
    public init<I: BinaryInteger>(_ values: [I]) {
        self.init(values.map { Optional($0) })
    }

    // Array type oids (pg_type.typarray of each element type).
    private static let textArray = PostgresType(1009)
    private static let int8Array = PostgresType(1016)
    private static let uuidArray = PostgresType(2951)
    private static let jsonbArray = PostgresType(3807)

    /// The binary layout: dimensions (1), whether any element is NULL, the element type, the
    /// length and lower bound (1) of the one dimension, then each element as its length
    /// (-1 for NULL) followed by its binary form. Integers are big-endian.
    private init(element: PostgresType, array: PostgresType, _ elements: [[UInt8]?]) {
        var out: [UInt8] = []
        out.reserveCapacity(20 + elements.reduce(0) { $0 + 4 + ($1?.count ?? 0) })
        func append(_ value: Int32) {
            withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
        }
        append(1)
        append(elements.contains { $0 == nil } ? 1 : 0)
        append(Int32(bitPattern: element.rawValue))
        append(Int32(elements.count))
        append(1)
        for element in elements {
            guard let element else {
                append(-1)
                continue
            }
            append(Int32(element.count))
            out.append(contentsOf: element)
        }
        postgresData = PostgresData(type: array, format: .binary, bytes: out)
    }
}
