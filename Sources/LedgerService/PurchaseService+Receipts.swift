import AppStore
import AppStoreClient
import EventStore
import Foundation
import Ledger
import LedgerStore
import Postgres
import Primitives

extension PurchaseService {
    /// `POST /v1/receipts`: records the receipt, asks Apple, and records what was decided.
    ///
    /// The receipt is durable before Apple is asked; if Apple cannot answer, the submission
    /// stays pending (the worker retries it) and the client hears `pending`.
    ///
    /// `appLimit`: the app the calling token is limited to; a receipt of another app is refused.
    public func submitReceipt(
        userId: String, receiptData: String, transactionId: String?, orderId: String?, appLimit: String? = nil,
        idempotencyKey: IdempotencyKey? = nil, metadata: RequestMetadata
    ) async throws -> SubmissionOutcome {
        try await mappingDatabaseErrors {
            let submission = Submission(
                submissionId: UUID().uuidString.lowercased(), userId: userId, orderId: orderId, transactionId: transactionId, bundleId: appLimit)
            if let earlier = try await record(
                submission, kind: .receipt, document: Array(receiptData.utf8), documentKind: "receipt", idempotencyKey: idempotencyKey,
                metadata: metadata) {
                return earlier
            }
            return try await verify(submission, receiptData: receiptData, attempt: 1, submissionVersion: 1, metadata: metadata)
        }
    }

    /// `POST /v1/transactions`: a StoreKit 2 signed transaction, verified here (signature and
    /// `x5c` chain) without asking Apple, then decided by the same rules as a receipt.
    public func submitSignedTransaction(
        userId: String, signedTransaction: String, orderId: String?, appLimit: String? = nil, idempotencyKey: IdempotencyKey? = nil,
        metadata: RequestMetadata
    ) async throws -> SubmissionOutcome {
        try await mappingDatabaseErrors {
            let document = Array(signedTransaction.utf8)
            let verified: Verified<SignedTransaction>
            let submissionId = UUID().uuidString.lowercased()
            do throws(AppStoreError) {
                verified = try await signedData.verifyTransaction(signedTransaction)
            } catch {
                // A forged or foreign JWS is recorded too: a dispute may need to show it was refused.
                let submission = Submission(submissionId: submissionId, userId: userId, orderId: orderId, bundleId: appLimit)
                if let earlier = try await record(
                    submission, kind: .signedTransaction, document: document, documentKind: "signed_transaction",
                    idempotencyKey: idempotencyKey, metadata: metadata) {
                    return earlier
                }
                return try await rejectSigned(submission, because: error, metadata: metadata)
            }
            let submission = Submission(
                submissionId: submissionId, userId: userId, orderId: orderId, transactionId: verified.payload.transactionId ?? "", bundleId: appLimit)
            if let earlier = try await record(
                submission, kind: .signedTransaction, document: document, documentKind: "signed_transaction",
                idempotencyKey: idempotencyKey, metadata: metadata) {
                return earlier
            }
            return try await decideSigned(submission, verified.payload, metadata: metadata)
        }
    }

    /// Closes a recorded signed-transaction submission whose JWS did not verify.
    func rejectSigned(_ submission: Submission, because error: AppStoreError, metadata: RequestMetadata) async throws -> SubmissionOutcome {
        // A JWS whose signature verified but whose content is not understood is no forgery:
        // never `signature_invalid`.
        let (code, message): (RejectionCode, String) =
            switch error.code {
            case .bundleIDMismatch: (.bundleIdMismatch, "the signed transaction is for another app")
            case .unreadablePayload:
                (.receiptInvalid, "the signed transaction's signature verifies, but its content is not understood (\(error.underlying ?? error.message))")
            default: (.signatureInvalid, "the signed transaction does not verify: \(error.code)")
            }
        let rejection = DeliveryRejected(submissionId: submission.submissionId, userId: submission.userId, code: code, message: message)
        return try await close(submission, at: 1, with: [.deliveryRejected(rejection)], citedDocuments: [], metadata: metadata)
    }

    /// Decides a verified StoreKit 2 transaction recorded as `submission` (stream at version 1).
    func decideSigned(_ submission: Submission, _ transaction: SignedTransaction, metadata: RequestMetadata) async throws -> SubmissionOutcome {
        try await decideAndRecord(submission, evidence: Evidence(signed: transaction), submissionVersion: 1, leadingEvents: [], metadata: metadata)
    }

    /// Appends `ReceiptSubmitted` as the submission stream's first event, the proof it cites
    /// stored in the same transaction. Returns nil once recorded; with an `idempotencyKey` used
    /// before for the same proof, user, order and transaction id, the answer that submission
    /// got instead (`pending` while it is still being decided), and nothing is recorded.
    func record(
        _ submission: Submission, kind: SubmissionKind, document: [UInt8], documentKind: String, idempotencyKey: IdempotencyKey? = nil,
        metadata: RequestMetadata
    ) async throws -> SubmissionOutcome? {
        let proof = DocumentStore.insert(document, kind: documentKind, sealedFor: try await people.documentSeal(forUser: submission.userId))
        let submitted = ReceiptSubmitted(
            submissionId: submission.submissionId, userId: submission.userId, orderId: submission.orderId,
            transactionId: submission.transactionId, kind: kind, documentSha256: proof.name, submittedAtMs: clock(),
            bundleId: submission.bundleId)
        // `.some(nil)`: recorded now; `.some(answer)`: the first request's answer.
        let first: SubmissionOutcome?? = try await once(
            key: idempotencyKey?.stored, naming: "Idempotency-Key \(idempotencyKey?.text ?? "")",
            earlier: { event -> SubmissionOutcome?? in
                guard case .receiptSubmitted(let first) = event, first.userId == submitted.userId, first.orderId == submitted.orderId,
                      first.documentSha256 == submitted.documentSha256, first.kind == submitted.kind, first.bundleId == submitted.bundleId,
                      kind == .signedTransaction || first.transactionId == submitted.transactionId else { return nil }
                let original = Submission(
                    submissionId: first.submissionId, userId: first.userId, orderId: first.orderId, transactionId: first.transactionId,
                    bundleId: first.bundleId)
                if let settled = try await settledOutcome(of: original, after: 1) { return .some(settled) }
                return .some(try await decideAbandoned(first, original: original, metadata: metadata))
            }
        ) {
            try await log.append(
                [LedgerAppend(stream: Streams.submission(submission.submissionId), expectation: .noStream, events: [.receiptSubmitted(submitted)])],
                metadata: metadata, alongside: [proof.statement], idempotencyKey: idempotencyKey?.stored)
            return .some(nil)
        }
        return first ?? nil
    }

    /// A submission an earlier request with the same Idempotency-Key recorded and never decided:
    /// that request is gone (a failover or a crash cut it off between the two appends) or is still
    /// deciding. The client is asking again, so it is decided now instead of after the retry
    /// worker's grace for abandoned submissions. Two deciders race safely: each appends expecting
    /// the submission's version 1, and the loser reads the winner's answer.
    func decideAbandoned(_ first: ReceiptSubmitted, original: Submission, metadata: RequestMetadata) async throws -> SubmissionOutcome {
        let waiting = SubmissionOutcome.pending(retryAfterSeconds: configuration.retry.clientRetryAfterSeconds)
        // Anything after the ReceiptSubmitted (Apple's answers, a pending mark) is the worker's.
        guard try await log.read(stream: Streams.submission(first.submissionId)).count == 1 else { return waiting }
        do {
            return try await resume(first, attempt: 1, at: 1, metadata: metadata) ?? waiting
        } catch EventStoreError.Code.wrongExpectedVersion {
            return try await settledOutcome(of: original, after: 1) ?? waiting
        }
    }

    /// Asks Apple about a recorded receipt and records every attempt and the outcome, the
    /// submission's stream being at `submissionVersion`. Used for the first try and by the worker.
    func verify(
        _ submission: Submission, receiptData: String, attempt: Int, submissionVersion: Int64, metadata: RequestMetadata
    ) async throws -> SubmissionOutcome {
        var outcome: VerificationOutcome
        do {
            outcome = try await verifyReceipt.verify(receiptData: receiptData)
            // The receipt names its app only once Apple has read it. The first app's secret goes
            // first (an account's primary secret, which every app accepts, belongs there); when
            // Apple says it is not this receipt's app's (21004), each other app's secret is tried,
            // every attempt recorded.
            for secret in otherAppsSecrets where outcome.response?.status == .sharedSecretMismatch {
                let next = try await verifyReceipt.verify(receiptData: receiptData, sharedSecret: secret)
                outcome = VerificationOutcome(verdict: next.verdict, response: next.response, attempts: outcome.attempts + next.attempts)
            }
        } catch {
            // The client throws only for input it cannot send (an empty receipt): that receipt
            // can never verify, and the answer says exactly why.
            let rejection = DeliveryRejected(
                submissionId: submission.submissionId, userId: submission.userId, code: .receiptInvalid,
                message: "the receipt cannot be sent to Apple: \(error.message)")
            return try await close(submission, at: submissionVersion, with: [.deliveryRejected(rejection)], citedDocuments: [], metadata: metadata)
        }
        outcome.attempts.forEach(onAppleAttempt)
        let (responded, bodies) = appleResponded(
            outcome.attempts, submissionId: submission.submissionId, sealedFor: try await people.documentSeal(forUser: submission.userId))
        switch (outcome.verdict, outcome.response) {
        case (.valid, let response?), (.expiredButDecoded, let response?):
            let fallback = outcome.endpoint == .sandbox ? "Sandbox" : "Production"
            let evidence = Evidence(response: response, environmentFallback: fallback)
            return try await decideAndRecord(
                submission, evidence: evidence, submissionVersion: submissionVersion, leadingEvents: responded, citedDocuments: bodies,
                metadata: metadata)
        case (.valid, nil), (.expiredButDecoded, nil):
            // Cannot happen with the client as written; if it ever does, asking again is safe.
            return try await keepPending(submission, at: submissionVersion, attempt: attempt, reason: "Apple's answer carried no body",
                                         with: responded, citedDocuments: bodies, metadata: metadata)
        case (.permanent(let cause), _):
            let rejection = DeliveryRejected(
                submissionId: submission.submissionId, userId: submission.userId, code: .receiptInvalid,
                message: "Apple refused the receipt: \(cause)")
            return try await close(
                submission, at: submissionVersion, with: responded + [.deliveryRejected(rejection)], citedDocuments: bodies, metadata: metadata)
        case (.retryLater(let cause), _), (.configurationAlarm(let cause), _):
            if case .configurationAlarm = outcome.verdict {
                logger.critical("verifyReceipt says our configuration is wrong (shared secret?); receipts stay pending", metadata: ["cause": "\(cause)"])
            }
            return try await keepPending(submission, at: submissionVersion, attempt: attempt, reason: cause.description,
                                         with: responded, citedDocuments: bodies, metadata: metadata)
        }
    }

    /// Records that Apple must be asked again after the backoff of `attempt`.
    func keepPending(
        _ submission: Submission, at version: Int64, attempt: Int, reason: String, with responded: [LedgerEvent], citedDocuments: [SQL],
        metadata: RequestMetadata
    ) async throws -> SubmissionOutcome {
        let pending = VerificationPending(
            submissionId: submission.submissionId, reason: reason, attempt: attempt,
            retryAfterSeconds: configuration.retry.clientRetryAfterSeconds,
            nextAttemptAtMs: machineClock() + Millis.of(configuration.retry.delay(afterAttempt: attempt)))
        return try await close(
            submission, at: version, with: responded + [.verificationPending(pending)], citedDocuments: citedDocuments, metadata: metadata)
    }

    /// Appends events to the submission's stream only, with the documents they cite; a
    /// conflict means another worker or request settled it, whose answer is returned.
    func close(
        _ submission: Submission, at version: Int64, with events: [LedgerEvent], citedDocuments: [SQL], metadata: RequestMetadata
    ) async throws -> SubmissionOutcome {
        do {
            try await log.append(
                [LedgerAppend(stream: Streams.submission(submission.submissionId), expectation: .exactly(version), events: events)],
                metadata: metadata, alongside: citedDocuments)
        } catch EventStoreError.Code.wrongExpectedVersion {
            if let settled = try await settledOutcome(of: submission, after: version) { return settled }
            // Someone else wrote to the stream without settling it: the ledger's own race, not
            // the client's fault; the receipt is kept and the worker finishes it.
            throw LedgerServiceError(.busy, "submission \(submission.submissionId) is being decided by another worker; ask again")
        }
        for case .deliveryRejected(let r) in events { return .rejected(r.code, r.message) }
        for case .verificationPending(let p) in events { return .pending(retryAfterSeconds: p.retryAfterSeconds) }
        return .pending(retryAfterSeconds: configuration.retry.clientRetryAfterSeconds)
    }

    /// The `AppleResponded` event of each attempt, and the statements storing the bodies they
    /// cite, for the append that records them (the bodies commit with the events).
    /// `seal`: the submitting person's, as Apple's answers about their receipt are theirs.
    func appleResponded(_ attempts: [VerifyReceiptAttempt], submissionId: String, sealedFor seal: DocumentSeal?) -> (events: [LedgerEvent], documents: [SQL]) {
        let bodies = attempts.filter { !$0.body.isEmpty }.map { DocumentStore.insert(Array($0.body), kind: "apple_response", sealedFor: seal) }
        var next = bodies.map(\.name).makeIterator()
        let events: [LedgerEvent] = attempts.map { attempt in
            let name = attempt.body.isEmpty ? nil : next.next()
            return .appleResponded(AppleResponded(
                submissionId: submissionId, endpoint: attempt.endpoint.rawValue, url: attempt.url, httpStatus: attempt.httpStatus,
                status: attempt.status.map { $0.rawValue }, latencyMs: Millis.of(attempt.latency),
                startedAtMs: attempt.startedAtMs, documentSha256: name,
                failure: attempt.failure?.code.rawValue))
        }
        return (events, bodies.map(\.statement))
    }
}
