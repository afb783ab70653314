import Postgres

/// Turns a payload of schema version N into version N+1 of the same event type. The stored
/// event is never rewritten: upcasting happens on every read, so the chain still verifies.
public struct Upcaster: Sendable {
    public var eventType: String
    public var fromSchemaVersion: Int32
    public var upcast: @Sendable (JSONB) throws -> JSONB

    public init(eventType: String, from schemaVersion: Int32, upcast: @escaping @Sendable (JSONB) throws -> JSONB) {
        self.eventType = eventType
        self.fromSchemaVersion = schemaVersion
        self.upcast = upcast
    }
}

/// The upcasters a store applies on read, chained: v1 → v2 → v3 ...
public struct Upcasters: Sendable {
    private var steps: [Key: Upcaster] = [:]

    private struct Key: Hashable {
        var type: String
        var version: Int32
    }

    public init(_ upcasters: [Upcaster] = []) {
        for upcaster in upcasters {
            steps[Key(type: upcaster.eventType, version: upcaster.fromSchemaVersion)] = upcaster
        }
    }

    /// `event` with its payload brought to the newest schema version this process knows.
    public func apply(to event: RecordedEvent) throws -> RecordedEvent {
        var event = event
        while let step = steps[Key(type: event.type, version: event.schemaVersion)] {
            event.payload = try step.upcast(event.payload)
            event.schemaVersion += 1
        }
        return event
    }
}
