import AppStore
import Foundation
import Primitives

/// Decodes a stored payload from the `JSONValue` that `JSONValue.parsedQuickly` read, giving
/// exactly what `LedgerJSON.decoder` gives from the same bytes, or throwing.
///
/// Every rebuild and every timeline decodes each event it reads. Through `JSONDecoder` that was
/// about 40% of a fold's time and most of a long timeline's (perf): its generic containers, and
/// each object's keys converted and copied into a dictionary of their own. Here the keys are
/// converted through the same remembered table, the values are already parsed, and nothing the
/// decoder does differently is attempted: wherever this decoder might differ (Foundation's own
/// special types, repeated keys after conversion, a number out of a type's range, any type
/// mismatch, a missing key) it throws, and the caller asks `JSONDecoder`, so the value, or the
/// error a caller sees, is always the decoder's. A test holds the two equal on every event type.
enum PayloadValueDecoding {
    /// Thrown wherever `JSONDecoder` might answer otherwise; never seen outside this module.
    struct Declined: Error {}

    static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try ValueDecoder.decode(T.self, from: value, at: nil)
    }
}

/// Foundation's JSONDecoder decodes these itself, not through their own `init(from:)`.
private func isFoundationSpecial<T>(_ type: T.Type) -> Bool {
    T.self == Date.self || T.self == Data.self || T.self == URL.self || T.self == Decimal.self
}

/// `[String: V]`, which JSONDecoder reads with its keys as they are (no key strategy), as
/// the encoder writes them.
private protocol StringKeyedDictionary {
    static func decodeRaw(_ fields: [String: JSONValue], path: CodingPathNode?) throws -> Self
}

extension Dictionary: StringKeyedDictionary where Key == String, Value: Decodable {
    fileprivate static func decodeRaw(_ fields: [String: JSONValue], path: CodingPathNode?) throws -> Self {
        var result: [String: Value] = [:]
        result.reserveCapacity(fields.count)
        for (key, value) in fields {
            result[key] = try ValueDecoder.decode(Value.self, from: value, at: CodingPathNode(parent: path, key: AnyKey(key)))
        }
        return result
    }
}

/// The coding path as a chain, made into an array only when asked (errors, rarely).
private final class CodingPathNode {
    let parent: CodingPathNode?
    let key: any CodingKey

    init(parent: CodingPathNode?, key: any CodingKey) {
        self.parent = parent
        self.key = key
    }

    static func path(_ node: CodingPathNode?) -> [any CodingKey] {
        var keys: [any CodingKey] = []
        var node = node
        while let current = node {
            keys.append(current.key)
            node = current.parent
        }
        return keys.reversed()
    }
}

private struct IndexKey: CodingKey {
    var intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private final class ValueDecoder: Decoder {
    let value: JSONValue
    let path: CodingPathNode?

    init(_ value: JSONValue, path: CodingPathNode?) {
        self.value = value
        self.path = path
    }

    var codingPath: [any CodingKey] { CodingPathNode.path(path) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Every container decodes its values through here. The path is made only for what is not
    /// a scalar, since most values are.
    static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue, at path: @autoclosure () -> CodingPathNode?) throws -> T {
        if isFoundationSpecial(T.self) { throw PayloadValueDecoding.Declined() }
        if let scalar = try Scalars.decode(T.self, from: value) { return scalar }
        if let dictionary = T.self as? any StringKeyedDictionary.Type {
            guard case .object(let fields) = value else { throw PayloadValueDecoding.Declined() }
            return try dictionary.decodeRaw(fields, path: path()) as! T
        }
        return try T(from: ValueDecoder(value, path: path()))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let fields) = value else { throw PayloadValueDecoding.Declined() }
        return KeyedDecodingContainer(try KeyedValues<Key>(fields, path: path))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let values) = value else { throw PayloadValueDecoding.Declined() }
        return UnkeyedValues(values, path: path)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleValue(decoder: self) }
}

/// The scalar types, read strictly: only what JSONDecoder reads the same way.
private enum Scalars {
    static func decode<T>(_ type: T.Type, from value: JSONValue) throws -> T? {
        switch T.self {
        case is String.Type:
            guard case .string(let string) = value else { throw PayloadValueDecoding.Declined() }
            return (string as! T)
        case is Bool.Type:
            guard case .bool(let bool) = value else { throw PayloadValueDecoding.Declined() }
            return (bool as! T)
        case is Int64.Type: return (try integer(value, as: Int64.self) as! T)
        case is Int.Type: return (try integer(value, as: Int.self) as! T)
        case is Int32.Type: return (try integer(value, as: Int32.self) as! T)
        case is Int16.Type: return (try integer(value, as: Int16.self) as! T)
        case is Int8.Type: return (try integer(value, as: Int8.self) as! T)
        case is UInt64.Type: return (try integer(value, as: UInt64.self) as! T)
        case is UInt.Type: return (try integer(value, as: UInt.self) as! T)
        case is UInt32.Type: return (try integer(value, as: UInt32.self) as! T)
        case is UInt16.Type: return (try integer(value, as: UInt16.self) as! T)
        case is UInt8.Type: return (try integer(value, as: UInt8.self) as! T)
        case is Double.Type:
            // The quick reader gives integers only (it declines fractions and exponents), and
            // Double(Int64) rounds to nearest as parsing the digits does. Past 2^53 the two might
            // still be asked to agree on ties, so those are left to the decoder.
            guard case .integer(let integer) = value, integer.magnitude <= 1 << 53 else { throw PayloadValueDecoding.Declined() }
            return (Double(integer) as! T)
        case is Float.Type: throw PayloadValueDecoding.Declined()
        default: return nil
        }
    }

    static func integer<I: FixedWidthInteger>(_ value: JSONValue, as: I.Type) throws -> I {
        guard case .integer(let integer) = value, let exact = I(exactly: integer) else { throw PayloadValueDecoding.Declined() }
        return exact
    }
}

private struct KeyedValues<Key: CodingKey>: KeyedDecodingContainerProtocol {
    /// The object's values under their converted names, as JSONDecoder's key strategy names them.
    let fields: [String: JSONValue]
    let path: CodingPathNode?

    init(_ raw: [String: JSONValue], path: CodingPathNode?) throws {
        var fields: [String: JSONValue] = [:]
        fields.reserveCapacity(raw.count)
        for (key, value) in raw {
            // Two keys naming one field after conversion: which wins is the decoder's business.
            guard fields.updateValue(value, forKey: SnakeCaseKeys.camelCased(key)) == nil else { throw PayloadValueDecoding.Declined() }
        }
        self.fields = fields
        self.path = path
    }

    var codingPath: [any CodingKey] { CodingPathNode.path(path) }
    var allKeys: [Key] { fields.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { fields[key.stringValue] != nil }

    private func value(_ key: Key) throws -> JSONValue {
        guard let value = fields[key.stringValue] else { throw PayloadValueDecoding.Declined() }
        return value
    }

    private func decoder(_ key: Key) throws -> ValueDecoder {
        ValueDecoder(try value(key), path: CodingPathNode(parent: path, key: key))
    }

    func decodeNil(forKey key: Key) throws -> Bool { try value(key) == .null }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try ValueDecoder.decode(T.self, from: value(key), at: CodingPathNode(parent: path, key: key))
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = fields[key.stringValue], value != .null else { return nil }
        return try ValueDecoder.decode(T.self, from: value, at: CodingPathNode(parent: path, key: key))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try decoder(key).container(keyedBy: NestedKey.self)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try decoder(key).unkeyedContainer() }

    func superDecoder() throws -> any Decoder { throw PayloadValueDecoding.Declined() }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw PayloadValueDecoding.Declined() }
}

private struct UnkeyedValues: UnkeyedDecodingContainer {
    let values: [JSONValue]
    let path: CodingPathNode?
    var currentIndex = 0

    init(_ values: [JSONValue], path: CodingPathNode?) {
        self.values = values
        self.path = path
    }

    var codingPath: [any CodingKey] { CodingPathNode.path(path) }
    var count: Int? { values.count }
    var isAtEnd: Bool { currentIndex >= values.count }

    private mutating func next() throws -> (JSONValue, CodingPathNode) {
        guard currentIndex < values.count else { throw PayloadValueDecoding.Declined() }
        defer { currentIndex += 1 }
        return (values[currentIndex], CodingPathNode(parent: path, key: IndexKey(currentIndex)))
    }

    mutating func decodeNil() throws -> Bool {
        guard currentIndex < values.count else { throw PayloadValueDecoding.Declined() }
        if values[currentIndex] == .null {
            currentIndex += 1
            return true
        }
        return false
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        guard currentIndex < values.count else { throw PayloadValueDecoding.Declined() }
        let index = currentIndex
        let decoded = try ValueDecoder.decode(T.self, from: values[index], at: CodingPathNode(parent: path, key: IndexKey(index)))
        currentIndex += 1
        return decoded
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (value, node) = try next()
        return try ValueDecoder(value, path: node).container(keyedBy: NestedKey.self)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (value, node) = try next()
        return try ValueDecoder(value, path: node).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { throw PayloadValueDecoding.Declined() }
}

private struct SingleValue: SingleValueDecodingContainer {
    let decoder: ValueDecoder

    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.value == .null }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try ValueDecoder.decode(T.self, from: decoder.value, at: decoder.path)
    }
}

extension LedgerJSON {
    /// `decoder.decode(T.self, from: bytes)`'s value or error, read without the decoder where
    /// `parsedQuickly` and `PayloadValueDecoding` can.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        if let value = JSONValue.parsedQuickly(bytes), let decoded = try? PayloadValueDecoding.decode(T.self, from: value) {
            return decoded
        }
        return try decoder.decode(T.self, from: Data(bytes))
    }
}
