import AppStore
import AppStoreClient
import EventStore
import Foundation
import Ledger
import LedgerStore

extension PurchaseService {
    /// Asks Apple to finish one delivered transaction and records the answer
    /// (`TransactionFinished`, once per transaction). Returns false when Apple could not answer
    /// now (5xx, time-outs, 429 past its waits) or does not know the transaction yet (404
    /// 4040010: Apple's own servers learn of a purchase moments apart): nothing is recorded and
    /// the worker asks again. Another refusal (a malformed or foreign id) is final, recorded.
    public func finishWithApple(_ delivery: LedgerReads.UnfinishedDelivery, metadata: RequestMetadata) async throws -> Bool {
        let client = try await requireServerAPI(for: delivery.bundleId)
        guard let environment = AppStoreEnvironment(rawValue: delivery.environment) else { return true }
        let finished: TransactionFinished
        let body: [UInt8]
        do throws(ServerAPIError) {
            let answer = try await client.finishTransaction(delivery.transactionId, environment: environment)
            body = answer.body
            finished = TransactionFinished(
                transactionId: delivery.transactionId, environment: delivery.environment, outcome: "finished", appleErrorCode: nil,
                answerDocumentSha256: "", atMs: clock())
        } catch {
            guard error.kind == .refused, error.httpStatus != 401, !error.isTransactionNotFound else { return false }
            body = error.attempts.last?.body ?? []
            finished = TransactionFinished(
                transactionId: delivery.transactionId, environment: delivery.environment, outcome: "refused", appleErrorCode: error.errorCode,
                answerDocumentSha256: "", atMs: clock())
        }
        var recorded = finished
        let document = DocumentStore.insert(body, kind: "apple_finish_transaction_answer")
        recorded.answerDocumentSha256 = document.name
        do {
            try await mappingDatabaseErrors {
                try await log.append(
                    [LedgerAppend(stream: Streams.transactionFinished(delivery.transactionId), expectation: .noStream, events: [.transactionFinished(recorded)])],
                    metadata: metadata, alongside: [document.statement])
            }
        } catch EventStoreError.Code.wrongExpectedVersion {
            // Another server's worker recorded it first: finished either way.
        }
        return true
    }
}
