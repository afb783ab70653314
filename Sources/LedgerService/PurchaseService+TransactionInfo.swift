import AppStore
import AppStoreClient
import EventStore
import Foundation
import Ledger
import LedgerStore
import Logging
import Postgres

/// What became of asking Apple's Get Transaction Info about one transaction.
public enum TransactionInfoOutcome: Sendable, Hashable {
    /// Apple's signed transaction verified and is recorded now.
    case recorded(TransactionInfoRecorded)
    /// Recorded before, by this server or another: nothing appended.
    case alreadyRecorded
    /// Apple answered and nothing can be recorded from its answer; asking again at once would
    /// change nothing.
    case notRecorded(TransactionInfoRefusal)
}

/// Why an answer of Get Transaction Info recorded nothing.
public enum TransactionInfoRefusal: String, Sendable, Hashable {
    /// 404 `TransactionIdNotFoundError` (4040010): Apple knows no such transaction in that environment.
    case notFound = "transaction_not_found"
    /// Another 4xx: Apple refused the request as it stands (an id that is no number, say).
    case refused
    /// A 2xx whose body is not `{"signedTransactionInfo": JWS}`.
    case malformedAnswer = "malformed_answer"
    /// The JWS does not verify (signature, chain, bundle id or environment).
    case signatureInvalid = "signature_invalid"
    /// The JWS verifies but is about another transaction.
    case otherTransaction = "other_transaction"
}

extension PurchaseService {
    /// `TransactionInfoRecorded.source` of what Get Transaction Info answered.
    public static let transactionInfoSource = "get-transaction-info"

    /// Asks Apple's Get Transaction Info (`GET /inApps/v1/transactions/{transactionId}`) about
    /// one transaction, verifies the `signedTransactionInfo` it answers (signature, chain,
    /// bundle id, environment, and that it is this transaction), and records it: the JWS
    /// verbatim as a document (kind `apple_transaction_info`) and `TransactionInfoRecorded`
    /// (storefront, price in milliunits, currency, as Apple signed them) as the first event of
    /// `Streams.transactionInfo(transactionId)`, expecting no stream, in one transaction (a
    /// storefront that is no alpha-3 code is left out, `Storefront.countryCode`). So a
    /// transaction is recorded once however many servers ask: a second append is `alreadyRecorded`,
    /// as is a transaction already recorded when asked (Apple is then not asked).
    ///
    /// For the worker that asks about sales seen only in receipts (`TransactionInfoWorker`),
    /// never for the request path. Throws the `ServerAPIError` when Apple cannot answer now
    /// (429, 5xx, time-outs, no connection, 401): nothing is recorded, ask again later.
    public func recordTransactionInfo(
        transactionId: String, environment: AppStoreEnvironment, askingWith client: ServerAPIClient, metadata: RequestMetadata
    ) async throws -> TransactionInfoOutcome {
        let stream = Streams.transactionInfo(transactionId)
        if try await mappingDatabaseErrors({ try await !log.store.read(stream: stream, limit: 1).isEmpty }) {
            return .alreadyRecorded
        }
        let answer: ServerAPIAnswer<TransactionInfoResponse>
        do throws(ServerAPIError) {
            answer = try await client.transactionInfo(transactionId, environment: environment)
        } catch {
            switch error.kind {
            case .refused: return .notRecorded(error.isTransactionNotFound || error.httpStatus == 404 ? .notFound : .refused)
            case .malformedAnswer: return .notRecorded(.malformedAnswer)
            case .rateLimited, .unavailable, .unauthorized, .invalidKey: throw error
            }
        }
        guard let jws = answer.value.signedTransactionInfo else { return .notRecorded(.malformedAnswer) }
        let signed: SignedTransaction
        do throws(AppStoreError) {
            signed = try await signedData.verifyTransaction(jws).payload
        } catch {
            logger.error("Apple's Get Transaction Info answer does not verify; not recorded", metadata: [
                "transaction_id": "\(transactionId)", "error": "\(error.code)",
            ])
            return .notRecorded(.signatureInvalid)
        }
        guard signed.transactionId == transactionId else { return .notRecorded(.otherTransaction) }
        let document = DocumentStore.insert(Array(jws.utf8), kind: "apple_transaction_info", sealedFor: try await documentSeal(for: [signed]))
        let recorded = TransactionInfoRecorded(
            transactionId: transactionId, originalTransactionId: signed.originalTransactionId ?? transactionId,
            environment: signed.rawEnvironment ?? environment.rawValue, storefront: Storefront.countryCode(signed.storefront),
            priceMilliunits: signed.price, currency: signed.currency, documentSha256: document.name, recordedAtMs: clock(),
            source: Self.transactionInfoSource)
        return try await mappingDatabaseErrors {
            do {
                try await log.append(
                    [LedgerAppend(stream: stream, expectation: .noStream, events: [.transactionInfoRecorded(recorded)])],
                    metadata: metadata, alongside: [document.statement])
                return .recorded(recorded)
            } catch EventStoreError.Code.wrongExpectedVersion {
                // Another server (or an earlier pass) recorded Apple's answer first.
                return .alreadyRecorded
            }
        }
    }
}
