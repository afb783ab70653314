/// An optional field written as `null` when it has no value, where Swift's synthesized encoding
/// would leave the key out: the ledger's JSON (docs/http-api.md's answers, `reconcile-reports
/// --format json`) lists every field, so a reader sees that a value is absent, not a key missing.
@propertyWrapper
public struct WrittenNull<Value> {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }
}

extension WrittenNull: Encodable where Value: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension WrittenNull: Decodable where Value: Decodable {
    /// The key must be there (it always is, written): `null` reads as nil.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }
}

extension WrittenNull: Sendable where Value: Sendable {}
extension WrittenNull: Equatable where Value: Equatable {}
extension WrittenNull: Hashable where Value: Hashable {}
