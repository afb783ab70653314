import AppStore
import Foundation
import Synchronization

/// JSONDecoder's `convertFromSnakeCase`, remembered per key. Foundation converts every key of
/// every object afresh (splitting, capitalizing and joining strings): a rebuild's profile put
/// that at a fifth of the process's CPU and over two fifths of its JSON decoding, for the few
/// dozen keys event payloads have.
enum SnakeCaseKeys {
    /// Keys come from bodies too, which anyone may fill with new names: past this many, keys
    /// are converted without being remembered, so the table cannot grow without bound.
    static let limit = 4_096
    private static let known = Mutex<[String: String]>([:])

    /// How many conversions are remembered (for tests of the bound).
    static var rememberedCount: Int { known.withLock { $0.count } }

    /// The strategy's function: the key Foundation's own conversion gives for the last key of
    /// `path`.
    static func convert(_ path: [any CodingKey]) -> any CodingKey {
        guard let key = path.last else { return AnyKey("") }
        let raw = key.stringValue
        if let converted = known.withLock({ $0[raw] }) { return AnyKey(converted) }
        let converted = foundationConversion(raw)
        known.withLock { table in
            if table.count < limit { table[raw] = converted }
        }
        return AnyKey(converted)
    }

    /// Exactly Foundation's rules (underscores kept at both ends, components after the first
    /// capitalized, ...), by asking a decoder that uses them for the name of `raw`.
    static func foundationConversion(_ raw: String) -> String {
        guard let data = try? JSONEncoder().encode([raw: 0]),
              let names = try? reference.decode(Names.self, from: data).names,
              names.count == 1
        else { return raw }
        return names[0]
    }

    private static let reference: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }()

    private struct Names: Decodable {
        var names: [String]
        init(from decoder: any Decoder) throws {
            names = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue)
        }
    }
}
