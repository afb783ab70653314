import AppStore
import EventStore
import Foundation
import Ledger
import Postgres

extension PurchaseService {
    /// `POST /v1/receipts`: records the receipt, asks Apple, and records what was decided.
    ///
    /// The receipt is durable before Apple is asked; if Apple cannot answer, the submission
    /// stays pending (the worker retries it) and the client hears `pending`.
    public func submitReceipt(
        userId: String, receiptData: String, transactionId: String?, orderId: String?, metadata: RequestMetadata
    ) async throws -> SubmissionOutcome {
        try await mappingDatabaseErrors {
            let submission = Submission(
                submissionId: UUID().uuidString.lowercased(), userId: userId, orderId: orderId, transactionId: transactionId)
            try await record(submission, kind: .receipt, document: Array(receiptData.utf8), documentKind: "receipt", metadata: metadata)
            return try await verify(submission, receiptData: receiptData, attempt: 1, submissionVersion: 1, metadata: metadata)
        }
    }

    /// `POST /v1/transactions`: a StoreKit 2 signed transaction, verified here (signature and
    /// `x5c` chain) without asking Apple, then decided by the same rules as a receipt.
    public func submitSignedTransaction(
        userId: String, signedTransaction: String, orderId: String?, metadata: RequestMetadata
    ) async throws -> SubmissionOutcome {
        try await mappingDatabaseErrors {
            let verified: Verified<SignedTransaction>
            let submissionId = UUID().uuidString.lowercased()
            do throws(AppStoreError) {
                verified = try await signedData.verifyTransaction(signedTransaction)
            } catch {
                // A forged or foreign JWS is recorded too: a dispute may need to show it was refused.
                let code: RejectionCode = error.code == .bundleIDMismatch ? .bundleIdMismatch : .signatureInvalid
                let submission = Submission(submissionId: submissionId, userId: userId, orderId: orderId)
                try await record(submission, kind: .signedTransaction, document: Array(signedTransaction.utf8), documentKind: "signed_transaction", metadata: metadata)
                let message = code == .bundleIdMismatch ? "the signed transaction is for another app" : "the signed transaction does not verify: \(error.code)"
                try await log.append([LedgerAppend(
                    stream: Streams.submission(submissionId), expectation: .exactly(1),
                    events: [.deliveryRejected(DeliveryRejected(submissionId: submissionId, userId: userId, code: code, message: message))])],
                    metadata: metadata)
                return .rejected(code, message)
            }
            let evidence = Evidence(signed: verified.payload)
            let submission = Submission(
                submissionId: submissionId, userId: userId, orderId: orderId, transactionId: verified.payload.transactionId ?? "")
            try await record(submission, kind: .signedTransaction, document: Array(signedTransaction.utf8), documentKind: "signed_transaction", metadata: metadata)
            return try await decideAndRecord(submission, evidence: evidence, submissionVersion: 1, leadingEvents: [], metadata: metadata)
        }
    }

    /// Appends `ReceiptSubmitted` as the submission stream's first event, the proof it cites
    /// stored in the same transaction.
    func record(_ submission: Submission, kind: SubmissionKind, document: [UInt8], documentKind: String, metadata: RequestMetadata) async throws {
        let proof = DocumentStore.insert(document, kind: documentKind)
        let submitted = ReceiptSubmitted(
            submissionId: submission.submissionId, userId: submission.userId, orderId: submission.orderId,
            transactionId: submission.transactionId, kind: kind, documentSha256: proof.name, submittedAtMs: clock())
        try await log.append(
            [LedgerAppend(stream: Streams.submission(submission.submissionId), expectation: .noStream, events: [.receiptSubmitted(submitted)])],
            metadata: metadata, alongside: [proof.statement])
    }

    /// Asks Apple about a recorded receipt and records every attempt and the outcome, the
    /// submission's stream being at `submissionVersion`. Used for the first try and by the worker.
    func verify(
        _ submission: Submission, receiptData: String, attempt: Int, submissionVersion: Int64, metadata: RequestMetadata
    ) async throws -> SubmissionOutcome {
        let outcome: VerificationOutcome
        do {
            outcome = try await verifyReceipt.verify(receiptData: receiptData)
        } catch {
            let rejection = DeliveryRejected(
                submissionId: submission.submissionId, userId: submission.userId, code: .receiptInvalid, message: "the receipt data is empty")
            try await log.append([LedgerAppend(
                stream: Streams.submission(submission.submissionId), expectation: .exactly(submissionVersion), events: [.deliveryRejected(rejection)])],
                metadata: metadata)
            return .rejected(.receiptInvalid, rejection.message)
        }
        outcome.attempts.forEach(onAppleAttempt)
        let (responded, bodies) = appleResponded(outcome.attempts, submissionId: submission.submissionId)
        switch outcome.verdict {
        case .valid, .expiredButDecoded:
            guard let response = outcome.response else {
                throw LedgerServiceError(.invalidRequest, "Apple's usable answer carried no body")
            }
            let fallback = outcome.endpoint == .sandbox ? "Sandbox" : "Production"
            let evidence = Evidence(response: response, environmentFallback: fallback)
            return try await decideAndRecord(
                submission, evidence: evidence, submissionVersion: submissionVersion, leadingEvents: responded, citedDocuments: bodies,
                metadata: metadata)
        case .permanent(let cause):
            let rejection = DeliveryRejected(
                submissionId: submission.submissionId, userId: submission.userId, code: .receiptInvalid,
                message: "Apple refused the receipt: \(cause)")
            return try await close(
                submission, at: submissionVersion, with: responded + [.deliveryRejected(rejection)], citedDocuments: bodies, metadata: metadata)
        case .retryLater(let cause), .configurationAlarm(let cause):
            if case .configurationAlarm = outcome.verdict {
                logger.critical("verifyReceipt says our configuration is wrong (shared secret?); receipts stay pending", metadata: ["cause": "\(cause)"])
            }
            let delay = configuration.retry.delay(afterAttempt: attempt)
            let pending = VerificationPending(
                submissionId: submission.submissionId, reason: cause.description, attempt: attempt,
                retryAfterSeconds: configuration.retry.clientRetryAfterSeconds,
                nextAttemptAtMs: PurchaseService.wallClockMs() + Int64(delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000))
            return try await close(
                submission, at: submissionVersion, with: responded + [.verificationPending(pending)], citedDocuments: bodies, metadata: metadata)
        }
    }

    /// Appends events to the submission's stream only, with the documents they cite; a
    /// conflict means another worker or request settled it, whose answer is returned.
    private func close(
        _ submission: Submission, at version: Int64, with events: [LedgerEvent], citedDocuments: [SQL], metadata: RequestMetadata
    ) async throws -> SubmissionOutcome {
        do {
            try await log.append(
                [LedgerAppend(stream: Streams.submission(submission.submissionId), expectation: .exactly(version), events: events)],
                metadata: metadata, alongside: citedDocuments)
        } catch EventStoreError.Code.wrongExpectedVersion {
            if let settled = try await settledOutcome(of: submission, after: version) { return settled }
            throw LedgerServiceError(.invalidRequest, "submission \(submission.submissionId) changed while it was being decided")
        }
        for case .deliveryRejected(let r) in events { return .rejected(r.code, r.message) }
        for case .verificationPending(let p) in events { return .pending(retryAfterSeconds: p.retryAfterSeconds) }
        return .pending(retryAfterSeconds: configuration.retry.clientRetryAfterSeconds)
    }

    /// The `AppleResponded` event of each attempt, and the statements storing the bodies they
    /// cite, for the append that records them (the bodies commit with the events).
    func appleResponded(_ attempts: [VerifyReceiptAttempt], submissionId: String) -> (events: [LedgerEvent], documents: [SQL]) {
        let bodies = attempts.filter { !$0.body.isEmpty }.map { DocumentStore.insert(Array($0.body), kind: "apple_response") }
        var next = bodies.map(\.name).makeIterator()
        let events: [LedgerEvent] = attempts.map { attempt in
            let name = attempt.body.isEmpty ? nil : next.next()
            let latency = attempt.latency.components
            return .appleResponded(AppleResponded(
                submissionId: submissionId, endpoint: attempt.endpoint.rawValue, url: attempt.url, httpStatus: attempt.httpStatus,
                status: attempt.status.map { $0.rawValue }, latencyMs: latency.seconds * 1000 + latency.attoseconds / 1_000_000_000_000_000,
                startedAtMs: Int64((attempt.startedAt.timeIntervalSince1970 * 1000).rounded(.down)), documentSha256: name,
                failure: attempt.failure?.code.rawValue))
        }
        return (events, bodies.map(\.statement))
    }
}
