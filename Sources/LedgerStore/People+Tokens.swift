import Foundation
import Postgres
import Ledger
import Sealing

/// App account tokens, as the edges see them (docs/erasure.md): a token the ledger issues to a
/// sealed person is recorded as a handle under their key and bound to them by keyed look-up, so
/// the token Apple hands back in a transaction becomes the same handle before anything decides
/// on it. Once the person is erased, their token reads `erased:SUBJECT`.
extension People {
    /// A new app account token for an order of `user` (what the log records for them): its
    /// handle under their key, and the statement binding it to their subject, to run in the
    /// order's own append; as it is, and nothing to bind, for a person recorded in clear.
    public func issueToken(forUser user: String) async throws -> (recorded: String, binding: SQL?) {
        let token = UUID().uuidString.lowercased()
        guard let subject = Handle.subject(of: user) else { return (token, nil) }
        guard let key = try await key(of: subject) else { throw SubjectStoreError.damagedKey(subject.rawValue) }
        let binding = try await subjects.binding(token: token, to: subject)
        let handle = Handle.seal(token, field: .appAccountToken, subject: subject, key: key)
        Self.sealedInThisRequest?.add(handle, token)
        remember(handle, ofTokenLookup: try await subjects.lookupKey().token(token))
        return (handle, binding)
    }

    /// What the log records for each of `tokens` (lower-case UUIDs, as Apple's transactions and
    /// support give them): the handle of a token the ledger issued to a sealed person,
    /// `erased:SUBJECT` once that person is erased, and the token itself when the ledger never
    /// issued it to a subject (one recorded in clear before erasure came, or one the app made).
    public func recordedTokens(_ tokens: Set<String>) async throws -> [String: String] {
        // Before sealing began no token was bound to anyone: no look-up to make.
        guard !tokens.isEmpty, try await sealingBegan() else { return Dictionary(uniqueKeysWithValues: tokens.map { ($0, $0) }) }
        let index = try await subjects.lookupKey()
        var recorded: [String: String] = Self.sealedInThisRequest?.tokens.withLock { known in known.filter { tokens.contains($0.key) } } ?? [:]
        for token in tokens where recorded[token] == nil { recorded[token] = recordedToken(ofLookup: index.token(token)) }
        let unknown = tokens.filter { recorded[$0] == nil }
        guard !unknown.isEmpty else { return recorded }
        let known = try await subjects.subjects(forTokens: Set(unknown))
        for token in unknown {
            guard let (subject, key) = known[token] else {
                recorded[token] = token
                continue
            }
            guard let key else {
                recorded[token] = Handle.erased(subject)
                continue
            }
            Self.sealedInThisRequest?.remember(key, of: subject)
            let handle = Handle.seal(token, field: .appAccountToken, subject: subject, key: key)
            remember(handle, ofTokenLookup: index.token(token))
            recorded[token] = handle
        }
        Self.sealedInThisRequest?.tokens.withLock { known in known.merge(recorded) { _, new in new } }
        return recorded
    }

    /// `evidence` with each transaction's app account token as the log records it
    /// (`recordedTokens`), so deciding matches it to the order that issued it.
    public func recordingTokens(of evidence: Evidence) async throws -> Evidence {
        let tokens = Set(evidence.entries.compactMap(\.appAccountToken))
        guard !tokens.isEmpty else { return evidence }
        let recorded = try await recordedTokens(tokens)
        var sealed = evidence
        for index in sealed.entries.indices {
            sealed.entries[index].appAccountToken = sealed.entries[index].appAccountToken.flatMap { recorded[$0] }
        }
        return sealed
    }

    /// The value `recorded` holds (a handle opened; anything else as it is); nil once its
    /// subject is erased. For what must be given to Apple as it is, such as a signed offer's token.
    public func plaintext(of recorded: String) async throws -> String? {
        guard Handle.subject(of: recorded) != nil else { return recorded.hasPrefix("erased:") ? nil : recorded }
        guard let name = try await names(for: [recorded])[recorded], !name.hasPrefix("erased:") else { return nil }
        return name
    }
}

/// Documents about a person (docs/erasure.md, "Documents").
extension People {
    /// The seal for documents about the person `user` names (what the log records for them);
    /// nil for a person recorded in clear before erasure came.
    public func documentSeal(forUser user: String?) async throws -> DocumentSeal? {
        guard let user, let subject = Handle.subject(of: user) else { return nil }
        return try await documentSeal(for: [subject])
    }

    /// The seal for a document whose events are `appends` (a notification and what it
    /// changed), or that names `tokens` (as the log records them): the first person they name.
    /// Nil when they name no one.
    public func documentSeal(naming appends: [LedgerAppend], tokens: [String?] = []) async throws -> DocumentSeal? {
        var named: [SubjectID] = tokens.compactMap { $0.flatMap(Handle.subject(of:)) }
        for append in appends {
            for event in append.events {
                guard let payload = try event.payload?.encoded() else { continue }
                named += HandleText.handles(in: Array(payload), outsideTags: false).compactMap(Handle.subject(of:))
            }
        }
        return try await documentSeal(for: named)
    }

    /// The first of `named`, with its key. A person erased already gets a key made for this
    /// document and never kept: what Apple sends about them afterwards (a refund, a renewal)
    /// is recorded, and reads `erased:SUBJECT` from the start.
    private func documentSeal(for named: [SubjectID]) async throws -> DocumentSeal? {
        guard let subject = named.first else { return nil }
        return DocumentSeal(subject: subject, key: try await key(of: subject) ?? SubjectKey.random())
    }
}
