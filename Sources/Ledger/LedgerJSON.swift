import Foundation

/// The JSON conventions of every event payload and API body: snake_case keys, sorted on output
/// so the same payload always has the same bytes.
///
/// The coders are shared: configured once and never changed after, and encoding and decoding
/// are safe from several threads at once, so no call pays for making its own (docs/benchmarks.md,
/// 'Why the code is shaped so').
public enum LedgerJSON {
    /// snake_case keys as `convertToSnakeCase` writes them, each key's conversion remembered.
    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .custom(SnakeCaseKeys.convertToSnakeCase)
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// snake_case keys as `convertFromSnakeCase` reads them, each key's conversion remembered.
    public static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .custom(SnakeCaseKeys.convertFromSnakeCase)
        return decoder
    }()

    /// A decoding error in words that name the field but quote no value (bodies may be receipts).
    public static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "not valid JSON" }
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? snake($0.stringValue) }
            return keys.isEmpty ? "the body" : keys.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            let parent = path(context)
            return "missing field \(parent == "the body" ? "" : parent + ".")\(snake(key.stringValue))"
        case .typeMismatch(let type, let context): return "\(path(context)) is not \(typeName(type))"
        case .valueNotFound(let type, let context): return "\(path(context)) must be \(typeName(type)), not null"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not valid JSON" : "\(path(context)) has a value that is not allowed"
        @unknown default: return "not valid JSON"
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type, is Int32.Type: "an integer"
        case is Bool.Type: "a boolean"
        default: "of the expected type"
        }
    }

    /// `productId` → `product_id`, for messages.
    static func snake(_ key: String) -> String {
        var out = ""
        for character in key {
            if character.isUppercase {
                out += "_" + character.lowercased()
            } else {
                out.append(character)
            }
        }
        return out
    }
}
