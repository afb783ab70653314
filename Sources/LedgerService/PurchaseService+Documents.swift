import AppStore
import Ledger
import LedgerStore

extension PurchaseService {
    /// The seal for an answer of Apple's listing `transactions` (docs/erasure.md, "Documents"):
    /// the person a token it names was issued to, else the one the ledger delivered the first
    /// of them to; nil when it names no one the ledger sealed.
    public func documentSeal(for transactions: [SignedTransaction]) async throws -> DocumentSeal? {
        let tokens = Set(transactions.compactMap { $0.appAccountToken?.lowercased() }.filter { !$0.isEmpty })
        let recorded = try await people.recordedTokens(tokens)
        if let seal = try await people.documentSeal(naming: [], tokens: Array(recorded.values)) { return seal }
        let holders = try await reads.transactionRecords(transactions.compactMap(\.transactionId)).map(\.delivery.userId)
        return try await people.documentSeal(naming: [], tokens: holders)
    }
}
