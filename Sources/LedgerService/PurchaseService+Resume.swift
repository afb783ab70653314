import AppStore
import Foundation
import Ledger
import LedgerStore

extension PurchaseService {
    /// Carries a recorded submission on from where its stream stands (`version`), as its
    /// request would have: a receipt or a restore asks Apple (again, for `attempt` > 1), a
    /// signed transaction is verified and decided. The retry worker's one way back into the
    /// flow, for abandoned submissions and pending ones alike. Nil when it cannot go on: an
    /// import (decided in its own COPY), or a proof missing from documents (logged).
    public func resume(_ submitted: ReceiptSubmitted, attempt: Int, at version: Int64, metadata: RequestMetadata) async throws -> SubmissionOutcome? {
        // As a request does: the person's key read once for the proof, Apple's answers and the decision.
        try await People.$sealedInThisRequest.withValue(People.sealedInThisRequest ?? People.SealedNames()) {
            try await resuming(submitted, attempt: attempt, at: version, metadata: metadata)
        }
    }

    private func resuming(_ submitted: ReceiptSubmitted, attempt: Int, at version: Int64, metadata: RequestMetadata) async throws -> SubmissionOutcome? {
        let id = submitted.submissionId
        guard submitted.kind != .imported else {
            logger.error("an imported submission without its decision", metadata: ["submission_id": "\(id)"])
            return nil
        }
        guard let document = try await documents.document(submitted.documentSha256) else {
            logger.critical("the proof of a recorded submission is missing from documents", metadata: ["submission_id": "\(id)"])
            return nil
        }
        let proof = String(decoding: document.content, as: UTF8.self)
        let submission = Submission(
            submissionId: id, userId: submitted.userId, orderId: submitted.orderId, transactionId: submitted.transactionId, bundleId: submitted.bundleId)
        // Its person was erased while it waited: their receipt is sealed under a key that is
        // gone, so Apple cannot be asked, and there is no one to deliver to. Settled, not retried.
        if document.isErased {
            let rejection = DeliveryRejected(
                submissionId: id, userId: submitted.userId, code: .userErased,
                message: "the person this was submitted for was erased before it was decided")
            return try await close(submission, at: version, with: [.deliveryRejected(rejection)], citedDocuments: [], metadata: metadata)
        }
        switch submitted.kind {
        case .receipt, .imported:
            return try await verify(submission, receiptData: proof, attempt: attempt, submissionVersion: version, metadata: metadata)
        case .restore:
            return try await restore(
                submission, proof: proof, attempt: attempt, submissionVersion: version, clients: try requireServerAPIClients(), metadata: metadata)
        case .signedTransaction:
            let verified: Verified<SignedTransaction>
            do throws(AppStoreError) {
                verified = try await signedData.verifyTransaction(proof)
            } catch {
                return try await rejectSigned(submission, because: error, metadata: metadata)
            }
            return try await decideSigned(submission, verified.payload, metadata: metadata)
        }
    }
}
