import Foundation

/// A `jsonb` value as UTF-8 JSON text.
///
/// On read, `bytes` is PostgreSQL's `jsonb::text` normal form (keys sorted by length then bytes,
/// duplicates removed, `", "` and `": "` separators), not the text that was written.
public struct JSONB: Sendable, Hashable, PostgresEncodable, PostgresDecodable {
    /// UTF-8 JSON text.
    public var bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }
    public init(_ string: String) { self.bytes = Array(string.utf8) }

    /// Encodes a value to JSON with the given encoder.
    public init<T: Encodable>(encoding value: T, encoder: JSONEncoder = JSONEncoder()) throws {
        self.bytes = Array(try encoder.encode(value))
    }

    /// Decodes the JSON text with the given decoder.
    public func decode<T: Decodable>(_ type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(type, from: Data(bytes))
    }

    /// The JSON text.
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    public static var postgresType: PostgresType { .jsonb }
    public var postgresData: PostgresData { PostgresData(type: .jsonb, format: .text, bytes: bytes) }

    /// Accepts `jsonb`, `json` and text columns, in text or binary format (binary jsonb is a
    /// version byte, 1, followed by the same text).
    public init(postgresCell cell: PostgresCell) throws {
        let bytes = try cell.requireBytes(for: JSONB.self)
        if cell.format == .binary && cell.type == .jsonb {
            guard bytes.first == 1 else { throw cell.decodingError(JSONB.self, "unknown binary jsonb version") }
            self.bytes = Array(bytes.dropFirst())
        } else {
            self.bytes = Array(bytes)
        }
    }
}
