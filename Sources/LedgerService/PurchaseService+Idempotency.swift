import EventStore
import Ledger
import LedgerStore

extension PurchaseService {
    /// Runs `append` once per idempotency `key`: the payments convention for every command that
    /// creates something (orders, submissions, spends), with the log's unique idempotency key as
    /// the referee. When the key was used before, `earlier` reads the event it recorded and
    /// returns that first answer, or nil when the request differs (`idempotency_conflict`), and
    /// nothing is appended. When another request takes the key meanwhile, its answer is the answer.
    func once<T: Sendable>(
        key: String?, naming name: String, earlier: (LedgerEvent) async throws -> T?, _ append: () async throws -> T
    ) async throws -> T {
        func recorded() async throws -> T? {
            guard let key, let (_, event) = try await reads.event(idempotencyKey: key) else { return nil }
            guard let answer = try await earlier(event) else {
                throw LedgerServiceError(.idempotencyConflict, "\(name) was used before for another request")
            }
            return answer
        }
        if let answer = try await recorded() { return answer }
        do {
            return try await append()
        } catch EventStoreError.Code.idempotencyConflict {
            if let answer = try await recorded() { return answer }
            throw LedgerServiceError(.busy, "\(name) is being used by another request; ask again")
        }
    }
}
