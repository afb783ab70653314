import Postgres

/// An append or read the store refused, typed so callers can react without parsing text.
/// `description` names the stream and versions but never payloads.
public struct EventStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The stream was not at the version the append expected: reload and decide again.
        public static let wrongExpectedVersion = Code("wrongExpectedVersion")
        /// An event id or idempotency key was used before for a different event.
        public static let idempotencyConflict = Code("idempotencyConflict")
        /// The append itself is malformed (no events, an empty stream id, ...).
        public static let invalidAppend = Code("invalidAppend")
        /// The store was closed.
        public static let closed = Code("closed")

        /// Lets `catch EventStoreError.Code.wrongExpectedVersion` read as it says.
        public static func ~= (pattern: Code, error: any Error) -> Bool {
            (error as? EventStoreError)?.code == pattern
        }
    }

    public var code: Code
    public var streamID: String?
    public var message: String

    public init(_ code: Code, streamID: String? = nil, message: String) {
        self.code = code
        self.streamID = streamID
        self.message = message
    }

    public var description: String {
        var text = "EventStoreError.\(code): \(message)"
        if let streamID { text += " (stream \(streamID))" }
        return text
    }
}

/// SQLSTATEs raised by the schema's own triggers (Schema/migrations/0001_events.sql).
public enum SQLStateLedger {
    /// `events_before_insert`: the stream is not at the expected version.
    public static let wrongExpectedVersion: SQLState = "LE001"
    /// `events_reject_change`: UPDATE, DELETE or TRUNCATE on the append-only log.
    public static let appendOnly: SQLState = "LE002"
}
