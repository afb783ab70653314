import Foundation
import Primitives

// Conformances of standard types. Parameters go in text format, except bytea (binary: raw bytes).
// Results arrive in text format unless a query asks for binary, so each decoder reads both
// (binary forms: PostgresCell+Binary.swift).

extension String: PostgresEncodable, PostgresDecodable {
    public static var postgresType: PostgresType { .text }
    public var postgresData: PostgresData { PostgresData(type: .text, text: self) }
    public init(postgresCell cell: PostgresCell) throws {
        self = String(decoding: try cell.requireBytes(for: String.self), as: UTF8.self)
    }
}

/// Parses PostgreSQL's text form of an integer (optional sign, decimal digits) without allocating.
@usableFromInline
func parseInteger<T: FixedWidthInteger>(_ bytes: ArraySlice<UInt8>, as: T.Type) -> T? {
    var index = bytes.startIndex
    guard index < bytes.endIndex else { return nil }
    var negative = false
    if bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
        negative = bytes[index] == UInt8(ascii: "-")
        index += 1
        guard index < bytes.endIndex else { return nil }
    }
    var value: T = 0
    while index < bytes.endIndex {
        let digit = bytes[index] &- UInt8(ascii: "0")
        guard digit < 10 else { return nil }
        let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
        let (next, overflow2) = negative
            ? times10.subtractingReportingOverflow(T(digit))
            : times10.addingReportingOverflow(T(digit))
        guard !overflow1, !overflow2 else { return nil }
        value = next
        index += 1
    }
    return value
}

extension PostgresCell {
    /// An integer column in either format, narrowed to `T` when it fits.
    func integer<T: FixedWidthInteger>(as type: T.Type) throws -> T {
        if format == .binary { return try binaryInteger(as: T.self) }
        guard let value = parseInteger(try requireBytes(for: T.self), as: T.self) else {
            throw decodingError(T.self, "not an integer in range")
        }
        return value
    }
}

extension Int: PostgresEncodable, PostgresDecodable {
    public static var postgresType: PostgresType { .int8 }
    public var postgresData: PostgresData { PostgresData(type: .int8, text: String(self)) }
    public init(postgresCell cell: PostgresCell) throws {
        self = try cell.integer(as: Int.self)
    }
}

extension Int64: PostgresEncodable, PostgresDecodable {
    public static var postgresType: PostgresType { .int8 }
    public var postgresData: PostgresData { PostgresData(type: .int8, text: String(self)) }
    public init(postgresCell cell: PostgresCell) throws {
        self = try cell.integer(as: Int64.self)
    }
}

extension Int32: PostgresEncodable, PostgresDecodable {
    public static var postgresType: PostgresType { .int4 }
    public var postgresData: PostgresData { PostgresData(type: .int4, text: String(self)) }
    public init(postgresCell cell: PostgresCell) throws {
        self = try cell.integer(as: Int32.self)
    }
}

extension Int16: PostgresEncodable, PostgresDecodable {
    public static var postgresType: PostgresType { .int2 }
    public var postgresData: PostgresData { PostgresData(type: .int2, text: String(self)) }
    public init(postgresCell cell: PostgresCell) throws {
        self = try cell.integer(as: Int16.self)
    }
}

extension Bool: PostgresEncodable, PostgresDecodable {
    public static var postgresType: PostgresType { .bool }
    public var postgresData: PostgresData { PostgresData(type: .bool, text: self ? "t" : "f") }
    public init(postgresCell cell: PostgresCell) throws {
        if cell.format == .binary {
            let bytes = try cell.requireBytes(for: Bool.self)
            guard bytes.count == 1 else { throw cell.decodingError(Bool.self) }
            self = bytes[bytes.startIndex] != 0
            return
        }
        switch String(decoding: try cell.requireBytes(for: Bool.self), as: UTF8.self) {
        case "t", "true": self = true
        case "f", "false": self = false
        default: throw cell.decodingError(Bool.self)
        }
    }
}

extension Double: PostgresEncodable, PostgresDecodable {
    public static var postgresType: PostgresType { .float8 }
    public var postgresData: PostgresData {
        let text: String
        if isNaN {
            text = "NaN"
        } else if isInfinite {
            text = self < 0 ? "-Infinity" : "Infinity"
        } else {
            text = String(self)  // shortest text that round-trips
        }
        return PostgresData(type: .float8, text: text)
    }
    public init(postgresCell cell: PostgresCell) throws {
        if cell.format == .binary {
            let bytes = try cell.requireBytes(for: Double.self)
            switch bytes.count {
            case 8: self = Double(bitPattern: UInt64(bigEndianBytes: bytes))
            case 4: self = Double(Float(bitPattern: UInt32(bigEndianBytes: bytes)))
            default: throw cell.decodingError(Double.self, "a binary float has 4 or 8 bytes")
            }
            return
        }
        guard let value = Double(String(decoding: try cell.requireBytes(for: Double.self), as: UTF8.self)) else {
            throw cell.decodingError(Double.self)
        }
        self = value
    }
}

extension Array: PostgresEncodable where Element == UInt8 {
    public static var postgresType: PostgresType { .bytea }
    /// bytea, sent in binary format: the bytes as they are.
    public var postgresData: PostgresData { PostgresData(type: .bytea, format: .binary, bytes: self) }
}

extension Array: PostgresDecodable where Element == UInt8 {
    /// Decodes bytea's hex text form (`\x0a1b…`) or its binary form (the bytes as they are);
    /// any other type gives its text bytes.
    public init(postgresCell cell: PostgresCell) throws {
        let bytes = try cell.requireBytes(for: [UInt8].self)
        guard cell.type == .bytea, cell.format == .text else {
            self = Array(bytes)
            return
        }
        guard let decoded = decodeByteaHex(bytes) else {
            throw cell.decodingError([UInt8].self, "bytea is not in hex format (bytea_output must be hex)")
        }
        self = decoded
    }
}

/// Decodes `\x` followed by hex digit pairs.
func decodeByteaHex(_ text: ArraySlice<UInt8>) -> [UInt8]? {
    guard text.count >= 2, text[text.startIndex] == UInt8(ascii: "\\"), text[text.startIndex + 1] == UInt8(ascii: "x") else { return nil }
    return Hex.decode(digits: text.dropFirst(2))
}

extension Data: PostgresEncodable, PostgresDecodable {
    public static var postgresType: PostgresType { .bytea }
    public var postgresData: PostgresData { PostgresData(type: .bytea, format: .binary, bytes: Array(self)) }
    public init(postgresCell cell: PostgresCell) throws {
        self = Data(try [UInt8](postgresCell: cell))
    }
}

extension UUID: PostgresEncodable, PostgresDecodable {
    public static var postgresType: PostgresType { .uuid }
    public var postgresData: PostgresData { PostgresData(type: .uuid, text: uuidString.lowercased()) }
    public init(postgresCell cell: PostgresCell) throws {
        if cell.format == .binary {
            self = try cell.binaryUUID()
            return
        }
        guard let uuid = UUID(postgresText: try cell.requireBytes(for: UUID.self)) else {
            throw cell.decodingError(UUID.self)
        }
        self = uuid
    }
}

extension Optional: PostgresEncodable where Wrapped: PostgresEncodable {
    public static var postgresType: PostgresType { Wrapped.postgresType }
    /// NULL of the wrapped type when nil.
    public var postgresData: PostgresData {
        switch self {
        case .some(let value): return value.postgresData
        case .none: return .null(Wrapped.postgresType)
        }
    }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    /// nil for NULL, else the wrapped type's decoding.
    public init(postgresCell cell: PostgresCell) throws {
        self = cell.isNull ? nil : try Wrapped(postgresCell: cell)
    }
}

extension PostgresData: PostgresEncodable {
    public var postgresData: PostgresData { self }
}
