import Ledger
@testable import LedgerService
import LedgerStore
import Testing

/// When the retry worker and a client decide the same submission at once, the one whose append
/// loses hears the winner's answer, rebuilt from the events the winner appended.
@Suite("The answer after a lost race")
struct SettledOutcomeTests {
    static let t0: Int64 = 1_767_225_600_000

    static func submitted(_ id: String, user: String) -> LedgerAppend {
        LedgerAppend(stream: Streams.submission(id), expectation: .noStream, events: [.receiptSubmitted(ReceiptSubmitted(
            submissionId: id, userId: user, orderId: nil, transactionId: nil, kind: .receipt,
            documentSha256: String(repeating: "ab", count: 32), submittedAtMs: t0))])
    }

    static func resolved(_ id: String, _ outcome: String, _ transactionIds: [String]) -> LedgerAppend {
        LedgerAppend(stream: Streams.submission(id), expectation: .exactly(1), events: [.submissionResolved(SubmissionResolved(
            submissionId: id, outcome: outcome, transactionIds: transactionIds))])
    }

    @Test("a transfer names the submitting user and no order; a renewal delivered before is in the list; the winner's order is kept")
    func sameAnswerAsTheWinner() async throws {
        try await LedgerHarness.with { ledger in
            let service = ledger.server.service
            let metadata = RequestMetadata(actor: "test")
            // T1 was delivered to alice on her order; T2 is a renewal of bob's subscription.
            try await service.log.append([LedgerAppend(stream: Streams.transaction("T1"), expectation: .noStream, events: [.purchaseDelivered(PurchaseDelivered(
                transactionId: "T1", originalTransactionId: "T1", productId: "com.example.removeads", kind: .nonConsumable, quantity: 1,
                userId: "alice", orderId: "o-alice", environment: "Production", purchaseDateMs: Self.t0, expiresDateMs: nil,
                priceMilliunits: 2990, currency: "USD", appAccountToken: nil, appTransactionId: nil, isTrial: false, grants: [:],
                submissionId: "s-0", match: .orderId))])], metadata: metadata)
            try await service.log.append([LedgerAppend(stream: Streams.transaction("T2"), expectation: .noStream, events: [.subscriptionRenewalSeen(SubscriptionRenewalSeen(
                transactionId: "T2", originalTransactionId: "T0", productId: "com.example.pro.monthly", userId: "bob", environment: "Production",
                purchaseDateMs: Self.t0, expiresDateMs: Self.t0 + 30 * 86_400_000, isTrial: false, priceMilliunits: 4990, currency: "USD",
                source: "s-0"))])], metadata: metadata)
            // bob's receipt took T1 over (transfer policy), and another of his found both delivered.
            try await service.log.append([Self.submitted("s-1", user: "bob"), Self.submitted("s-2", user: "bob")], metadata: metadata)
            try await service.log.append([Self.resolved("s-1", "delivered", ["T1"]), Self.resolved("s-2", "already_delivered", ["T2", "T1"])], metadata: metadata)

            let transfer = try await service.settledOutcome(of: Submission(submissionId: "s-1", userId: "bob"), after: 1)
            #expect(transfer == .delivered([Delivery(
                transactionId: "T1", originalTransactionId: "T1", productId: "com.example.removeads", orderId: nil, userId: "bob",
                quantity: 1, environment: "Production")]))
            let already = try await service.settledOutcome(of: Submission(submissionId: "s-2", userId: "bob"), after: 1)
            #expect(already == .alreadyDelivered([
                Delivery(transactionId: "T2", originalTransactionId: "T0", productId: "com.example.pro.monthly", orderId: nil, userId: "bob", quantity: 1, environment: "Production"),
                Delivery(transactionId: "T1", originalTransactionId: "T1", productId: "com.example.removeads", orderId: "o-alice", userId: "alice", quantity: 1, environment: "Production"),
            ]))
            #expect(try await service.settledOutcome(of: Submission(submissionId: "s-2", userId: "bob"), after: 2) == nil, "nothing settled past version 2")
        }
    }
}
