import AppStore
import Foundation
import Synchronization

/// Foundation's `convertFromSnakeCase` and `convertToSnakeCase`, remembered per key. Foundation
/// converts every key of every object afresh (splitting, capitalizing and joining strings),
/// while event payloads have only a few dozen keys, decoded by every rebuild and encoded by
/// every append (docs/benchmarks.md, 'Why the code is shaped so').
enum SnakeCaseKeys {
    /// Keys come from bodies too, which anyone may fill with new names: past this many, keys
    /// are converted without being remembered, so the tables cannot grow without bound.
    static let limit = 4_096
    private static let fromSnakeCase = RememberedConversion(limit: limit) { foundationConversion($0, toSnakeCase: false) }
    private static let toSnakeCase = RememberedConversion(limit: limit) { foundationConversion($0, toSnakeCase: true) }

    /// How many conversions each direction remembers (for tests of the bound).
    static var rememberedCount: (fromSnakeCase: Int, toSnakeCase: Int) { (fromSnakeCase.count, toSnakeCase.count) }

    /// The decoding strategy's function: the key Foundation's `convertFromSnakeCase` gives for
    /// the last key of `path`.
    static func convertFromSnakeCase(_ path: [any CodingKey]) -> any CodingKey {
        AnyKey(fromSnakeCase.converted(path.last?.stringValue ?? ""))
    }

    /// What `convertFromSnakeCase` makes of `key` (PayloadValueDecoding's keys).
    static func camelCased(_ key: String) -> String { fromSnakeCase.converted(key) }

    /// The encoding strategy's function: the key Foundation's `convertToSnakeCase` gives for
    /// the last key of `path`.
    static func convertToSnakeCase(_ path: [any CodingKey]) -> any CodingKey {
        AnyKey(toSnakeCase.converted(path.last?.stringValue ?? ""))
    }

    /// Exactly Foundation's rules (underscores kept at both ends, acronyms split, ...), by
    /// asking an encoder or decoder that uses them for the name of `raw`.
    static func foundationConversion(_ raw: String, toSnakeCase: Bool) -> String {
        let names: [String]?
        if toSnakeCase {
            let data = try? snakeEncoder.encode(OneKey(name: raw))
            names = data.flatMap { try? JSONDecoder().decode(Names.self, from: $0).names }
        } else {
            let data = try? JSONEncoder().encode([raw: 0])
            names = data.flatMap { try? camelDecoder.decode(Names.self, from: $0).names }
        }
        guard let names, names.count == 1 else { return raw }
        return names[0]
    }

    private static let camelDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }()

    private static let snakeEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return encoder
    }()

    /// An object with the one key `name`, encoded through a keyed container so the key
    /// strategy applies to it.
    private struct OneKey: Encodable {
        var name: String
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyKey.self)
            try container.encode(0, forKey: AnyKey(name))
        }
    }

    private struct Names: Decodable {
        var names: [String]
        init(from decoder: any Decoder) throws {
            names = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue)
        }
    }
}

/// One direction's table of converted keys, bounded.
private final class RememberedConversion: Sendable {
    private let limit: Int
    private let convert: @Sendable (String) -> String
    private let known = Mutex<[String: String]>([:])

    init(limit: Int, convert: @escaping @Sendable (String) -> String) {
        self.limit = limit
        self.convert = convert
    }

    var count: Int { known.withLock { $0.count } }

    func converted(_ raw: String) -> String {
        if let converted = known.withLock({ $0[raw] }) { return converted }
        let converted = convert(raw)
        known.withLock { table in
            if table.count < limit { table[raw] = converted }
        }
        return converted
    }
}
