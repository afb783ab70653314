/// A PostgreSQL type OID, e.g. 25 for `text`. 0 lets the server infer the type.
public struct PostgresType: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public init(_ oid: UInt32) { self.rawValue = oid }
    public var description: String { String(rawValue) }

    public static let unspecified = PostgresType(0)
    public static let bool = PostgresType(16)
    public static let bytea = PostgresType(17)
    public static let name = PostgresType(19)
    public static let int8 = PostgresType(20)
    public static let int2 = PostgresType(21)
    public static let int4 = PostgresType(23)
    public static let text = PostgresType(25)
    public static let oid = PostgresType(26)
    public static let json = PostgresType(114)
    public static let float4 = PostgresType(700)
    public static let float8 = PostgresType(701)
    public static let bpchar = PostgresType(1042)
    public static let varchar = PostgresType(1043)
    public static let date = PostgresType(1082)
    public static let timestamp = PostgresType(1114)
    public static let timestamptz = PostgresType(1184)
    public static let numeric = PostgresType(1700)
    public static let uuid = PostgresType(2950)
    public static let jsonb = PostgresType(3802)
}

/// The wire format of a value: PostgreSQL's text form or its binary form.
public enum PostgresFormat: Int32, Sendable, Hashable {
    case text = 0
    case binary = 1
}

/// One parameter value as sent to PostgreSQL: its type, its format, and its bytes (nil for NULL).
///
/// Text-format bytes must hold no NUL byte (libpq sends text parameters as C strings); sending
/// one throws ``PostgresError/Code-swift.struct/encoding``.
public struct PostgresData: Sendable, Hashable {
    public var type: PostgresType
    public var format: PostgresFormat
    public var bytes: [UInt8]?

    public init(type: PostgresType, format: PostgresFormat = .text, bytes: [UInt8]?) {
        self.type = type
        self.format = format
        self.bytes = bytes
    }

    /// A text-format value from its PostgreSQL text representation.
    public init(type: PostgresType, text: String) {
        self.init(type: type, format: .text, bytes: Array(text.utf8))
    }

    /// SQL NULL, of the given type (or inferred by the server).
    public static func null(_ type: PostgresType = .unspecified) -> PostgresData {
        PostgresData(type: type, format: .text, bytes: nil)
    }

    public var isNull: Bool { bytes == nil }
}

/// A value that can be sent as a query parameter.
public protocol PostgresEncodable: Sendable {
    /// The value's type, format and bytes.
    var postgresData: PostgresData { get }
    /// The type sent for a NULL of this type (an `Optional` that is `nil`).
    static var postgresType: PostgresType { get }
}

extension PostgresEncodable {
    public static var postgresType: PostgresType { .unspecified }
}

/// A value that can be read from a result cell.
public protocol PostgresDecodable {
    /// Decodes from a cell; throws ``PostgresError`` with code `.decoding` or `.unexpectedNull`.
    init(postgresCell cell: PostgresCell) throws
}

/// One value of a result row, in PostgreSQL's text format (this module asks for text results).
public struct PostgresCell: Sendable {
    /// The column's type OID.
    public var type: PostgresType
    public var format: PostgresFormat
    /// The column's name in the result.
    public var columnName: String
    /// The value's bytes, or nil for NULL. A slice of the result's buffer: indices do not start at 0.
    public var bytes: ArraySlice<UInt8>?

    public init(type: PostgresType, format: PostgresFormat = .text, columnName: String = "", bytes: ArraySlice<UInt8>?) {
        self.type = type
        self.format = format
        self.columnName = columnName
        self.bytes = bytes
    }

    public var isNull: Bool { bytes == nil }

    /// The bytes as UTF-8 text, or nil for NULL.
    public var string: String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

    /// The bytes, or a `.unexpectedNull` error naming the column and the requested type.
    public func requireBytes<T>(for type: T.Type) throws -> ArraySlice<UInt8> {
        guard let bytes else {
            throw PostgresError(code: .unexpectedNull, message: "column \"\(columnName)\" is NULL; cannot decode as \(T.self)")
        }
        return bytes
    }

    /// A decoding error that names the column and types but never the value.
    public func decodingError<T>(_ type: T.Type, _ reason: String = "invalid text form") -> PostgresError {
        PostgresError(
            code: .decoding,
            message: "column \"\(columnName)\" of type \(self.type) cannot decode as \(T.self): \(reason)"
        )
    }
}
