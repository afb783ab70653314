import AppStore
import AppStoreClient
import Foundation
import Ledger
import LedgerStore
import Postgres

extension PurchaseService {
    /// `POST /v1/users/{user_id}/restore`: reads the Apple account's transaction history through
    /// the App Store Server API, from the signed transaction or transaction id the app sent, and
    /// delivers what is owed under the receipt rules (exactly once, the ownership policy;
    /// consumables only against an open order, `PurchaseDecider.decideRestore`). Recorded
    /// before Apple is asked, so Apple being down leaves it pending for the worker.
    /// `appLimit`: the app a token limited to one app restricts it to.
    public func restoreThroughApple(
        userId: String, proof: String, appLimit: String? = nil, idempotencyKey: IdempotencyKey? = nil, metadata: RequestMetadata
    ) async throws -> SubmissionOutcome {
        let clients = try requireServerAPIClients()
        return try await mappingDatabaseErrors {
            let submission = Submission(submissionId: UUID().uuidString.lowercased(), userId: userId, bundleId: appLimit)
            if let earlier = try await record(
                submission, kind: .restore, document: Array(proof.utf8), documentKind: "restore_request", idempotencyKey: idempotencyKey,
                metadata: metadata) {
                return earlier
            }
            return try await restore(submission, proof: proof, attempt: 1, submissionVersion: 1, clients: clients, metadata: metadata)
        }
    }

    /// Asks Apple for the history and decides; the submission's stream is at `submissionVersion`.
    /// Used for the first try and by the worker.
    func restore(
        _ submission: Submission, proof: String, attempt: Int, submissionVersion: Int64, clients: ServerAPIClients, metadata: RequestMetadata
    ) async throws -> SubmissionOutcome {
        // The history is asked for by a transaction of the account: the signed one's (verified
        // here, which also names its app and environment), or the id as sent, in either
        // environment of each app that may hold it (Apple answers an app's key about that
        // app's transactions only; the token's app alone when it is limited to one).
        let anchor: String
        var asking: [(client: ServerAPIClient, environment: AppStoreEnvironment)] = []
        if proof.split(separator: ".", omittingEmptySubsequences: false).count == 3 {
            let verified: Verified<SignedTransaction>
            do throws(AppStoreError) {
                verified = try await signedData.verifyTransaction(proof)
            } catch {
                return try await rejectSigned(submission, because: error, metadata: metadata)
            }
            anchor = verified.payload.transactionId ?? ""
            let client = verified.payload.bundleId.flatMap { clients.client(for: $0) } ?? clients.first
            asking = [(client, verified.payload.environment == .sandbox ? .sandbox : .production)]
        } else {
            anchor = proof
            let apps = submission.bundleId.flatMap { clients.client(for: $0) }.map { [$0] } ?? clients.all
            for client in apps {
                asking += [(client, AppStoreEnvironment.production), (client, .sandbox)]
            }
        }
        let seal = try await people.documentSeal(forUser: submission.userId)
        for (client, environment) in asking {
            var pages: [(name: String, statement: SQL)] = []
            var transactions: [SignedTransaction] = []
            var revision: String?
            var failure: ServerAPIError?
            do throws(ServerAPIError) {
                repeat {
                    let page = try await client.transactionHistory(anchor, environment: environment, revision: revision)
                    pages.append(DocumentStore.insert(page.body, kind: "apple_transaction_history", sealedFor: seal))
                    for jws in page.value.signedTransactions {
                        // Only what verifies counts; Apple's own history always should.
                        if let verified = try? await signedData.verifyTransaction(jws) { transactions.append(verified.payload) }
                    }
                    revision = page.value.hasMore == true ? page.value.revision : nil
                } while revision != nil
            } catch {
                failure = error
            }
            if let failure {
                if failure.isTransactionNotFound { continue }
                if failure.kind == .refused || failure.kind == .malformedAnswer {
                    return try await close(submission, at: submissionVersion, with: [.deliveryRejected(DeliveryRejected(
                        submissionId: submission.submissionId, userId: submission.userId, code: .receiptInvalid,
                        message: "Apple refused the history request: \(failure)"))], citedDocuments: [], metadata: metadata)
                }
                // Down, rate limited, or our credentials refused: kept, the worker asks again.
                return try await keepPending(
                    submission, at: submissionVersion, attempt: attempt, reason: "App Store Server API: \(failure)", with: [], citedDocuments: [],
                    metadata: metadata)
            }
            let read = TransactionHistoryRead(
                submissionId: submission.submissionId, environment: environment.rawValue, transactionId: anchor,
                transactionCount: transactions.count, documentSha256List: pages.map(\.name))
            guard let bundle = transactions.first?.bundleId else {
                return try await close(submission, at: submissionVersion, with: [.transactionHistoryRead(read), .deliveryRejected(DeliveryRejected(
                    submissionId: submission.submissionId, userId: submission.userId, code: .transactionNotInReceipt,
                    message: "Apple's history of the account lists no purchase"))], citedDocuments: pages.map(\.statement), metadata: metadata)
            }
            let evidence = Evidence(bundleId: bundle, environment: environment.rawValue, entries: transactions.map { EvidenceEntry(signed: $0) })
            return try await decideAndRecord(
                submission, evidence: evidence, submissionVersion: submissionVersion, leadingEvents: [.transactionHistoryRead(read)],
                citedDocuments: pages.map(\.statement), metadata: metadata,
                decider: { PurchaseDecider.decideRestore($0, evidence: $1, context: $2) })
        }
        return try await close(submission, at: submissionVersion, with: [.deliveryRejected(DeliveryRejected(
            submissionId: submission.submissionId, userId: submission.userId, code: .receiptInvalid,
            message: "Apple knows no transaction \(anchor)"))], citedDocuments: [], metadata: metadata)
    }
}
