import AppleSimulator
import Foundation
import Ledger
@testable import LedgerService
import LedgerStore
@testable import LedgerWorkers
import Logging
import Testing

/// An accepted receipt always ends decided: a submission whose stream holds only
/// `ReceiptSubmitted` (its process died before asking Apple, or the database failed after Apple
/// answered) is decided by the worker, as its request would have been.
@Suite("Undecided submissions")
struct OrphanSubmissionTests {
    /// Records a submission as a request does before asking Apple, and stops there.
    static func abandon(_ service: PurchaseService, user: String, kind: SubmissionKind, proof: String, transactionId: String?) async throws -> String {
        let id = UUID().uuidString.lowercased()
        let submission = Submission(submissionId: id, userId: user, orderId: nil, transactionId: transactionId)
        let answer = try await service.record(
            submission, kind: kind, document: Array(proof.utf8), documentKind: kind == .receipt ? "receipt" : "signed_transaction",
            metadata: RequestMetadata(actor: "test"))
        #expect(answer == nil)
        return id
    }

    /// Runs a worker that takes every undecided submission over at once, and returns the
    /// submission's stream afterwards.
    static func decideAbandoned(_ service: PurchaseService, _ id: String) async throws -> [LedgerEvent] {
        let worker = RetryWorker(service: service, orphanGrace: .zero, logger: Logger(label: "test"))
        #expect(try await worker.runOnce() == 1)
        #expect(try await worker.runOnce() == 0, "decided once; the next pass finds nothing")
        return try await service.log.read(stream: Streams.submission(id)).map(\.event)
    }

    @Test("a receipt left undecided is verified and delivered by the worker once its grace has passed, and not before")
    func abandonedReceipt() async throws {
        try await LedgerHarness.with { ledger in
            let service = ledger.server.service
            let (order, purchase) = try await ledger.orderAndBuy(user: "u-orphan", product: "com.example.coins100", appleId: "apple-orphan")
            let id = try await Self.abandon(service, user: try await ledger.recorded("u-orphan"), kind: .receipt, proof: purchase.receiptData, transactionId: purchase.transactionId)

            let patient = RetryWorker(service: service, orphanGrace: .seconds(3600), logger: Logger(label: "test"))
            #expect(try await patient.runOnce() == 0, "a submission inside its grace may still be in its request's hands")
            #expect(try await service.log.read(stream: Streams.submission(id)).count == 1)

            let events = try await Self.decideAbandoned(service, id)
            guard case .submissionResolved(let resolved)? = events.last else {
                Issue.record("the submission was not decided: \(events)")
                return
            }
            #expect(resolved.outcome == "delivered")
            #expect(resolved.transactionIds == [purchase.transactionId])
            #expect(events.contains { if case .appleResponded = $0 { true } else { false } }, "Apple's answer is recorded")
            let delivered = try await ledger.events("PurchaseDelivered").compactMap { if case .purchaseDelivered(let d) = $0 { d } else { nil } }
            #expect(delivered.filter { $0.transactionId == purchase.transactionId }.map(\.orderId) == [order["order_id"] as? String])
        }
    }

    @Test("a signed transaction left undecided is verified and delivered by the worker")
    func abandonedSignedTransaction() async throws {
        try await LedgerHarness.with { ledger in
            let service = ledger.server.service
            let (_, purchase) = try await ledger.orderAndBuy(user: "u-orphan-2", product: "com.example.removeads", appleId: "apple-orphan-2")
            let id = try await Self.abandon(service, user: try await ledger.recorded("u-orphan-2"), kind: .signedTransaction, proof: purchase.signedTransaction, transactionId: purchase.transactionId)
            let events = try await Self.decideAbandoned(service, id)
            #expect(events.last.map { if case .submissionResolved(let r) = $0 { r.transactionIds } else { [] } } == [purchase.transactionId])
        }
    }

    @Test("a forged signed transaction left undecided is closed as signature_invalid, not left open")
    func abandonedForgery() async throws {
        try await LedgerHarness.with { ledger in
            let service = ledger.server.service
            let id = try await Self.abandon(service, user: "u-forger", kind: .signedTransaction, proof: "eyJhbGciOiJFUzI1NiJ9.e30.c2ln", transactionId: nil)
            let events = try await Self.decideAbandoned(service, id)
            guard case .deliveryRejected(let rejected)? = events.last else {
                Issue.record("the submission was not closed: \(events)")
                return
            }
            #expect(rejected.code == .signatureInvalid)
        }
    }

    @Test("the scan for undecided submissions starts where the servers left it, and never past one still undecided")
    func sharedCheckpoint() async throws {
        try await LedgerHarness.with { ledger in
            let service = ledger.server.service
            func position(of id: String) async throws -> Int64 {
                try #require(try await service.log.store.read(stream: Streams.submission(id)).first).position
            }
            let (_, first) = try await ledger.orderAndBuy(user: "u-mark", product: "com.example.coins100", appleId: "apple-mark-1")
            let a = try await Self.abandon(service, user: try await ledger.recorded("u-mark"), kind: .receipt, proof: first.receiptData, transactionId: first.transactionId)
            _ = try await Self.decideAbandoned(service, a)
            let afterA = try await service.reads.position(of: .undecidedSubmissions)
            #expect(afterA >= (try await position(of: a)), "decided, so the next start scans after it")
            try await service.reads.move(.undecidedSubmissions, to: 1)
            #expect(try await service.reads.position(of: .undecidedSubmissions) >= afterA, "never moved back")

            // One left undecided inside its grace holds the mark before it, whichever worker passes.
            let (_, second) = try await ledger.orderAndBuy(user: "u-mark", product: "com.example.coins100", appleId: "apple-mark-2")
            let b = try await Self.abandon(service, user: try await ledger.recorded("u-mark"), kind: .receipt, proof: second.receiptData, transactionId: second.transactionId)
            let patient = RetryWorker(service: service, orphanGrace: .seconds(3600), logger: Logger(label: "test"))
            #expect(try await patient.runOnce() == 0)
            let b0 = try await position(of: b)
            #expect(try await service.reads.position(of: .undecidedSubmissions) < b0)
            // A worker starting afresh (a restarted server) reads the mark and still finds it.
            let events = try await Self.decideAbandoned(service, b)
            #expect(events.last.map { if case .submissionResolved(let r) = $0 { r.transactionIds } else { [] } } == [second.transactionId])
            #expect(try await service.reads.position(of: .undecidedSubmissions) >= b0)
        }
    }
}
