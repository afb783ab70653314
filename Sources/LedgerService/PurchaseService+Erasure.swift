import EventStore
import Ledger
import LedgerStore
import Sealing

extension PurchaseService {
    /// Records that the ledger seals the people it meets from now on (`ErasureBegan`, once);
    /// nil when it already did. `serve` calls it on an empty log; `purchase-ledger erasure begin`
    /// on a log an earlier release recorded, once no server of that release runs.
    @discardableResult
    public func beginErasure(metadata: RequestMetadata) async throws -> ErasureBegan? {
        try await mappingDatabaseErrors {
            guard try await log.read(stream: Streams.erasure).isEmpty else { return nil }
            let began = ErasureBegan(beganAtMs: clock())
            do {
                _ = try await log.append(
                    [LedgerAppend(stream: Streams.erasure, expectation: .noStream, events: [.erasureBegan(began)])], metadata: metadata)
            } catch EventStoreError.Code.wrongExpectedVersion {
                return nil
            }
            return began
        }
    }

    /// Forgets a person (docs/erasure.md): records `UserErased` (the subject, the reason and the
    /// time; the actor in its metadata; never the id), then destroys the subject's key, so every
    /// handle sealed for them opens to `erased:SUBJECT` from then on. The chain, the money and a
    /// replay are untouched: no event changes. Once per `requestId`: the same request again
    /// answers the first result (and makes sure the key is gone); another person under the same
    /// request id is `idempotency_conflict`. An id no live subject has is `not_found` and records
    /// nothing; one the log holds in clear, from before erasure came, `recorded_before_erasure`.
    public func eraseUser(_ userId: String, reason: String, requestId: String, metadata: RequestMetadata) async throws -> UserErased {
        guard !requestId.isEmpty, requestId.count <= 128 else { throw LedgerServiceError(.invalidRequest, "request_id is 1 to 128 characters") }
        guard !reason.isEmpty, reason.count <= 500 else { throw LedgerServiceError(.invalidRequest, "reason is 1 to 500 characters") }
        // The reason is kept for ever, in clear: it must not be what it erases.
        guard !reason.contains(userId) else {
            throw LedgerServiceError(.invalidRequest, "reason must not contain the user id: it is kept after the erasure")
        }
        let key = "erase-user:\(requestId)"
        let handle = try await people.knownHandle(forUser: userId)
        let erased = try await mappingDatabaseErrors {
            try await once(key: key, naming: "request_id \(requestId)", earlier: { event -> UserErased? in
                // The first answer for this request: for this person's subject, or, the person
                // being gone, for any id that no longer has one (which is what a retry sees).
                guard case .userErased(let first) = event, handle.map({ Handle.subject(of: $0)?.rawValue == first.subject }) ?? true else { return nil }
                return first
            }) {
                guard let handle, let subject = Handle.subject(of: handle) else {
                    if try await people.recordedInClear(userId) {
                        throw LedgerServiceError(
                            .recordedBeforeErasure,
                            "user \(userId) was recorded before erasure came: the log holds the id in clear, which no erasure can remove (docs/erasure.md)")
                    }
                    throw LedgerServiceError(.notFound, "the ledger holds no user \(userId)")
                }
                let event = UserErased(subject: subject.rawValue, reason: reason, erasedAtMs: clock())
                _ = try await log.append(
                    [LedgerAppend(stream: Streams.erasure(subject: subject.rawValue), expectation: .noStream, events: [.userErased(event)])],
                    metadata: metadata, idempotencyKey: key)
                return event
            }
        }
        // After the event, so an erasure is never done unrecorded; again on a retry, so one that
        // stopped between the two finishes. The journal first: a key destroyed is a promise a
        // restore must not undo silently.
        guard let subject = SubjectID(erased.subject) else { throw LedgerServiceError(.invalidRequest, "subject \(erased.subject) is not one") }
        try await configuration.erasureJournal?.append(ErasureJournal.Entry(subject: subject.rawValue, erasedAtMs: erased.erasedAtMs, requestId: requestId))
        people.forgetTokens(of: subject)
        _ = try await mappingDatabaseErrors { try await people.subjects.erase(subject) }
        return erased
    }

    /// What re-applying an erasure journal did.
    public struct ReappliedErasures: Sendable, Hashable {
        /// Erasures the journal lists.
        public var listed = 0
        /// Keys found and destroyed: the database had been restored to before their erasure.
        public var keysDestroyed = 0
        /// `UserErased` recorded again, the log having lost it with the restore.
        public var recorded = 0

        public init(listed: Int = 0) {
            self.listed = listed
        }
    }

    /// Does again every erasure `journal` lists that the database no longer shows: the key of
    /// each listed subject is destroyed, and a `UserErased` is recorded for one the log lacks
    /// (told as `user.erased` again), dated as the journal says. Idempotent: on a database that
    /// lost nothing it changes nothing.
    public func reapply(_ journal: ErasureJournal, metadata: RequestMetadata) async throws -> ReappliedErasures {
        let entries = try journal.entries().filter { SubjectID($0.subject) != nil }
        var done = ReappliedErasures(listed: entries.count)
        guard !entries.isEmpty else { return done }
        // A journal only grows: which of its subjects a restore brought back is asked in two
        // queries, whatever its length, and only those are worked on.
        let (holdingKeys, recorded) = try await mappingDatabaseErrors {
            (try await people.subjects.keys(of: Set(entries.compactMap { SubjectID($0.subject) })),
             try await reads.existingStreams(entries.map { Streams.erasure(subject: $0.subject) }))
        }
        for entry in entries {
            guard let subject = SubjectID(entry.subject) else { continue }
            let stream = Streams.erasure(subject: subject.rawValue)
            try await mappingDatabaseErrors {
                if !recorded.contains(stream) {
                    let event = UserErased(
                        subject: subject.rawValue, reason: "re-applied from the erasure journal: the database was restored to before this erasure",
                        erasedAtMs: entry.erasedAtMs)
                    do {
                        _ = try await log.append([LedgerAppend(stream: stream, expectation: .noStream, events: [.userErased(event)])], metadata: metadata)
                        done.recorded += 1
                    } catch EventStoreError.Code.wrongExpectedVersion {
                        // Another server re-applied it first.
                    }
                }
                if holdingKeys[subject] != nil, try await people.subjects.erase(subject) {
                    people.forgetTokens(of: subject)
                    done.keysDestroyed += 1
                }
            }
        }
        return done
    }
}
