import EventStore
import Foundation
import Ledger
import Postgres

/// Who asked for an append, recorded as the events' metadata (never part of the fact).
public struct RequestMetadata: Sendable, Hashable, Codable {
    public var requestId: String?
    /// `api:<token name>`, `worker`, `cli`, `apple`.
    public var actor: String
    public var clientAddress: String?

    public init(requestId: String? = nil, actor: String, clientAddress: String? = nil) {
        self.requestId = requestId
        self.actor = actor
        self.clientAddress = clientAddress
    }
}

/// The ledger's events on the event store: typed appends with expected versions, typed reads.
public struct LedgerLog: Sendable {
    public let store: EventStore

    public init(store: EventStore) {
        self.store = store
    }

    /// Appends every `LedgerAppend` in one transaction: all or nothing, `alongside` included
    /// (the documents the events cite, `EventStore.append`). Throws
    /// `EventStoreError.wrongExpectedVersion` when another decision got to a stream first.
    /// `idempotencyKey` goes on the first event: the same key again with other content is
    /// `EventStoreError.idempotencyConflict`, and `LedgerReads.event(idempotencyKey:)` finds it.
    @discardableResult
    public func append(
        _ appends: [LedgerAppend], metadata: RequestMetadata, alongside: [SQL] = [], idempotencyKey: String? = nil
    ) async throws -> [RecordedEvent] {
        var streamAppends = try Self.streamAppends(appends, metadata: metadata)
        if let idempotencyKey, !streamAppends.isEmpty, !streamAppends[0].events.isEmpty {
            streamAppends[0].events[0].idempotencyKey = idempotencyKey
        }
        let recorded = try await store.append(streamAppends, alongside: alongside)
        if let box = RecordedPosition.current, let last = recorded.map(\.position).max() { box.note(last) }
        return recorded
    }

    /// Appends through COPY on `connection`, in the caller's transaction (imports).
    public func copyAppend(_ appends: [LedgerAppend], metadata: RequestMetadata, on connection: Connection) throws -> Int {
        try store.copyAppend(try Self.streamAppends(appends, metadata: metadata), on: connection)
    }

    static func streamAppends(_ appends: [LedgerAppend], metadata: RequestMetadata) throws -> [StreamAppend] {
        let meta = try JSONB(bytes: Array(LedgerJSON.encoder.encode(metadata)))
        return try appends.map { append in
            StreamAppend(
                try append.events.map { event in
                    guard let payload = event.payload else {
                        throw EventStoreError(.invalidAppend, message: "an unknown event type cannot be appended")
                    }
                    return NewEvent(
                        type: type(of: payload).eventType, schemaVersion: type(of: payload).schemaVersion,
                        payload: JSONB(bytes: Array(try payload.encoded())), metadata: meta)
                },
                to: append.stream, expecting: append.expectation.expectedVersion)
        }
    }

    /// The events of one stream, decoded.
    public func read(stream: String) async throws -> [(version: Int64, event: LedgerEvent)] {
        try await store.read(stream: stream).map { ($0.streamVersion, try LedgerEvent(type: $0.type, payload: Data($0.payload.bytes))) }
    }
}

extension LedgerAppend.Expectation {
    var expectedVersion: ExpectedVersion {
        switch self {
        case .noStream: .noStream
        case .exactly(let version): .exactly(version)
        case .any: .any
        }
    }
}

extension RecordedEvent {
    /// The ledger event this record holds.
    public var ledgerEvent: LedgerEvent {
        get throws { try LedgerEvent(type: type, bytes: payload.bytes) }
    }
}
