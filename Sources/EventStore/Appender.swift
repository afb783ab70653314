import Postgres

/// Appends on one connection. A "command" is the set of stream appends that must commit
/// together. Two paths:
/// - `insertBatch`: several commands as one INSERT in its own implicit transaction; one round
///   trip and one commit for the lot, which is what makes group commit pay.
/// - `appendCommand`: one command, idempotency-aware; the caller supplies the transaction.
enum Appender {
    /// Inserts every command's events in one statement, committing them together, after the
    /// commands' `alongside` statements in the same implicit transaction and round trip (a
    /// pipeline). Any conflict (a wrong version, a repeated id or key) fails the whole batch:
    /// the caller then falls back to `appendCommand` per command to find out which one and why.
    static func insertBatch(_ commands: [[StreamAppend]], alongside: [SQL] = [], on connection: Connection) throws -> [[RecordedEvent]] {
        let insert = AppendStatements.insert(AppendStatements.Rows(commands.flatMap { $0 }))
        let rows = alongside.isEmpty
            ? try connection.query(insert, resultFormat: .binary)
            : try connection.pipeline(alongside + [insert], resultFormat: .binary)[alongside.count]
        let inserted = try rows.map { try RecordedEvent(row: $0) }
        return split(inserted.sorted { $0.position < $1.position }, by: commands)
    }

    /// Appends one command, or returns the events it appended before if it is a retry: the same
    /// event ids or idempotency keys with the same streams, types and payloads. The same ids or
    /// keys for other content are `idempotencyConflict`; a stream at another version than
    /// expected is `wrongExpectedVersion`. Runs inside the caller's transaction.
    static func appendCommand(_ command: [StreamAppend], on connection: Connection) throws -> [RecordedEvent] {
        try validate(command)
        let rows = AppendStatements.Rows(command)
        let matches = try connection.query(AppendStatements.existing(rows), resultFormat: .binary)
        if matches.isEmpty {
            do {
                return try connection.query(AppendStatements.insert(rows), resultFormat: .binary).map { try RecordedEvent(row: $0) }
                    .sorted { $0.position < $1.position }
            } catch {
                throw translate(error, command: command)
            }
        }
        var originals: [Int64: RecordedEvent] = [:]
        var allSame = matches.count == rows.ids.count
        for row in matches {
            let ordinal: Int64 = try row.decode(0)
            let same: Bool = try row.decode(1)
            allSame = allSame && same && originals[ordinal] == nil
            originals[ordinal] = try RecordedEvent(row: row, from: 2)
        }
        guard allSame, originals.count == rows.ids.count else {
            throw EventStoreError(
                .idempotencyConflict, streamID: command.count == 1 ? command[0].streamID : nil,
                message: "an event id or idempotency key of this append was used before for a different event")
        }
        return (1...Int64(rows.ids.count)).compactMap { originals[$0] }
    }

    static func validate(_ command: [StreamAppend]) throws {
        guard !command.isEmpty, command.allSatisfy({ !$0.events.isEmpty }) else {
            throw EventStoreError(.invalidAppend, message: "an append needs at least one event for each stream")
        }
        for append in command {
            guard !append.streamID.isEmpty, append.events.allSatisfy({ !$0.type.isEmpty && $0.schemaVersion > 0 }) else {
                throw EventStoreError(
                    .invalidAppend, streamID: append.streamID,
                    message: "stream ids and event types must not be empty; schema versions start at 1")
            }
            if case .exactly(let version) = append.expectedVersion, version < 0 {
                throw EventStoreError(.invalidAppend, streamID: append.streamID, message: "an expected version is never negative")
            }
        }
    }

    /// Maps the schema's conflict errors to typed store errors; anything else passes through.
    static func translate(_ error: any Error, command: [StreamAppend]) -> any Error {
        guard let postgres = error as? PostgresError else { return error }
        let stream = command.count == 1 ? command[0].streamID : nil
        switch postgres.sqlState {
        case SQLStateLedger.wrongExpectedVersion?:
            return EventStoreError(.wrongExpectedVersion, streamID: stream, message: postgres.detail ?? "wrong expected version")
        case SQLState.uniqueViolation? where postgres.constraint == "events_stream_version_key":
            return EventStoreError(.wrongExpectedVersion, streamID: stream, message: "another append took this version")
        default:
            return error
        }
    }

    /// Whether a failed append may be retried as it is: a concurrent append of the same event id
    /// or key (the retry finds the original), a lost connection (the retry finds out whether
    /// the batch committed, by the ids), or a deadlock (statements `alongside` a command wait
    /// on each other's uncommitted rows when two transactions store the same documents).
    static func isRetryable(_ error: any Error) -> Bool {
        if error.isPostgresConnectionError { return true }
        guard let postgres = error as? PostgresError else { return false }
        if postgres.sqlState?.isTransactionRollback == true { return true }
        return postgres.sqlState == .uniqueViolation
            && (postgres.constraint == "events_event_id_key" || postgres.constraint == "events_idempotency_key_key")
    }

    private static func split(_ events: [RecordedEvent], by commands: [[StreamAppend]]) -> [[RecordedEvent]] {
        var result: [[RecordedEvent]] = []
        var start = 0
        for command in commands {
            let count = command.reduce(0) { $0 + $1.events.count }
            result.append(Array(events[start..<start + count]))
            start += count
        }
        return result
    }
}
