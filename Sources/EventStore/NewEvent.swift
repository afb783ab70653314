import Foundation
import Postgres

/// An event to append: a fact, named in the past tense, with a JSON payload whose shape is
/// identified by `schemaVersion` so that later code can upcast old payloads on read.
public struct NewEvent: Sendable, Hashable {
    /// Unique forever; appending the same id again with the same content returns the original.
    public var id: UUID
    public var type: String
    public var schemaVersion: Int32
    public var payload: JSONB
    /// Request id, causation, actor, client address: context, not part of the fact's identity
    /// (an idempotent retry with other metadata still returns the original event).
    public var metadata: JSONB
    /// A caller's key for "this command, once" (for example an HTTP Idempotency-Key).
    public var idempotencyKey: String?

    public init(
        id: UUID = NewEvent.makeID(), type: String, schemaVersion: Int32 = 1, payload: JSONB,
        metadata: JSONB = JSONB("{}"), idempotencyKey: String? = nil
    ) {
        self.id = id
        self.type = type
        self.schemaVersion = schemaVersion
        self.payload = payload
        self.metadata = metadata
        self.idempotencyKey = idempotencyKey
    }

    /// An event whose payload is `value` encoded as JSON.
    public init<Payload: Encodable>(
        id: UUID = NewEvent.makeID(), type: String, schemaVersion: Int32 = 1, encoding value: Payload,
        metadata: JSONB = JSONB("{}"), idempotencyKey: String? = nil
    ) throws {
        self.init(
            id: id, type: type, schemaVersion: schemaVersion, payload: try JSONB(encoding: value),
            metadata: metadata, idempotencyKey: idempotencyKey)
    }
}

/// Events for one stream with the version the stream is expected to be at.
public struct StreamAppend: Sendable, Hashable {
    public var streamID: String
    public var expectedVersion: ExpectedVersion
    public var events: [NewEvent]

    public init(_ events: [NewEvent], to streamID: String, expecting expectedVersion: ExpectedVersion = .any) {
        self.streamID = streamID
        self.expectedVersion = expectedVersion
        self.events = events
    }
}

extension NewEvent {
    /// A fresh event id: a random (version 4) UUID from the system's generator (`getrandom`
    /// on Linux), the default for every new event.
    ///
    /// Foundation's `UUID()` on Linux opens and reads `/dev/urandom` for every id, one `open`
    /// per appended event; `getrandom` needs none (docs/benchmarks.md, 'Why the code is shaped so').
    public static func makeID() -> UUID {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        var bytes = (high.bigEndian, low.bigEndian)
        return withUnsafeMutableBytes(of: &bytes) { raw in
            raw[6] = (raw[6] & 0x0F) | 0x40  // version 4
            raw[8] = (raw[8] & 0x3F) | 0x80  // RFC 4122 variant
            return UUID(uuid: (
                raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]))
        }
    }
}
