import Foundation
import LedgerStore
import Postgres
import Sealing
import Synchronization

/// The grown log's people, sealed as the live flow seals them (docs/erasure.md): a subject and
/// key per user in `subjects`, their ids and their orders' tokens recorded as handles. The
/// tokens are not bound for look-up (no bench asks Apple about them), which keeps growing a
/// 20,000,000-event log as fast as before. `BENCH_SEALED=0` grows a log of plain ids instead,
/// as a ledger recorded before erasure came holds them.
final class BenchPeople: Sendable {
    static let sealed = ProcessInfo.processInfo.environment["BENCH_SEALED"] != "0"

    private let subjects: SubjectStore
    private let known = Mutex<[Int64: (subject: SubjectID, key: SubjectKey, handle: String)]>([:])

    init(pool: ConnectionPool) {
        subjects = SubjectStore(pool: pool, keyEncryptionKey: nil)
    }

    /// Makes (or finds) the subjects of `users` not met yet: one round trip each, once per user.
    func meet(_ users: some Sequence<Int64>) async throws {
        guard Self.sealed else { return }
        for user in users where known.withLock({ $0[user] == nil }) {
            guard let (subject, key) = try await subjects.subject(forUser: Self.id(user), creating: true) else { continue }
            let handle = Handle.seal(Self.id(user), field: .userId, subject: subject, key: key)
            known.withLock { $0[user] = (subject, key, handle) }
        }
    }

    /// What the log records for user `user`: its handle once met, else the id.
    func recorded(_ user: Int64) -> String {
        known.withLock { $0[user]?.handle } ?? Self.id(user)
    }

    /// A new app account token for an order of `user`, as the log records it.
    func token(for user: Int64) -> String {
        let token = UUID().uuidString.lowercased()
        guard let (subject, key, _) = known.withLock({ $0[user] }) else { return token }
        return Handle.seal(token, field: .appAccountToken, subject: subject, key: key)
    }

    /// What the log records for user `user` in a log grown earlier: its handle when it has a
    /// subject, else the id.
    static func recorded(_ user: Int64, on pool: ConnectionPool) async throws -> String {
        try await People(subjects: SubjectStore(pool: pool, keyEncryptionKey: nil)).knownHandle(forUser: id(user)) ?? id(user)
    }

    static func id(_ user: Int64) -> String { "user-\(user)" }
}
