import Foundation

/// The two JSON spellings Apple uses: snake_case for verifyReceipt and v1 notifications,
/// camelCase for JWS payloads and v2.
enum AppleJSON {
    /// `value` as JSON text with snake_case keys (`purchaseDateMs` → `purchase_date_ms`).
    static func snakeCase(_ value: some Encodable) throws -> String {
        String(decoding: try snakeCaseData(value), as: UTF8.self)
    }

    static func snakeCaseData(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    /// `value` as JSON text with its keys as declared.
    static func camelCase(_ value: some Encodable) throws -> String {
        String(decoding: try camelCaseData(value), as: UTF8.self)
    }

    static func camelCaseData(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return try encoder.encode(value)
    }
}
