import Foundation
import Synchronization

/// Purchases from several clients that retry what got no 2xx (503, a connection refused, a
/// time-out), as a real app's backend would, each call with its own `Idempotency-Key`, so a
/// retry is the same request. Records when each 2xx came and which calls were started after a
/// given instant (the primary's death).
final class PurchaseStorm: Sendable {
    struct Purchase: Sendable {
        var index: Int
        var transactionId: String
        /// When the receipt's 2xx came, and whether that call began after the kill.
        var deliveredAt: ContinuousClock.Instant
        var attempts: Int
    }

    private struct State {
        var next = 0
        var done: [Purchase] = []
        var failures: [String] = []
        /// 2xx answers to calls that began after `killedAt`.
        var firstSuccessAfterKill: ContinuousClock.Instant?
        var killedAt: ContinuousClock.Instant?
        var retried = 0
        /// Why calls were retried: "503 database_unavailable", "no answer", ...
        var reasons: [String: Int] = [:]
    }

    private let state = Mutex(State())
    let count: Int
    let prefix: String

    init(count: Int, prefix: String) {
        self.count = count
        self.prefix = prefix
    }

    var delivered: Int { state.withLock { $0.done.count } }
    var purchases: [Purchase] { state.withLock { $0.done } }
    var failures: [String] { state.withLock { $0.failures } }
    var retried: Int { state.withLock { $0.retried } }
    var reasons: [String: Int] { state.withLock { $0.reasons } }
    func markKilled() { state.withLock { $0.killedAt = ContinuousClock.now } }
    var killToFirstSuccess: Duration? {
        state.withLock { s in s.killedAt.flatMap { k in s.firstSuccessAfterKill.map { $0 - k } } }
    }

    /// Runs `clients` clients until every purchase is delivered or the deadline passes.
    func run(ledger: LedgerHarness, clients: Int, deadline: Duration) async {
        let end = ContinuousClock.now + deadline
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<clients {
                group.addTask {
                    while let index = self.take() {
                        do {
                            try await self.purchase(index, ledger: ledger, until: end)
                        } catch {
                            self.state.withLock { $0.failures.append("purchase \(index): \(error)") }
                        }
                    }
                }
            }
        }
    }

    private func take() -> Int? {
        state.withLock { s in
            guard s.next < count else { return nil }
            s.next += 1
            return s.next - 1
        }
    }

    private func purchase(_ index: Int, ledger: LedgerHarness, until end: ContinuousClock.Instant) async throws {
        let user = "\(prefix)-u\(index)"
        let (order, _) = try await retrying("order \(index)", until: end) {
            try await ledger.request(
                .POST, "/v1/orders", body: #"{"user_id": "\#(user)", "product_id": "com.example.coins100"}"#,
                headers: [("Idempotency-Key", "order-\(self.prefix)-\(index)")])
        } accept: { $0.status == 201 }
        guard let token = order.json["app_account_token"] as? String else { throw HAClusterError("order without a token") }
        let bought = try await ledger.simulator.purchase(
            appleId: "apple-\(prefix)-\(index)", productId: "com.example.coins100", environment: .production,
            appAccountToken: UUID(uuidString: token))
        let body = try JSONSerialization.data(withJSONObject: [
            "user_id": user, "receipt_data": bought.receiptData, "transaction_id": bought.transactionId,
        ])
        let (answer, attempts) = try await retrying("receipt \(index)", until: end) {
            try await ledger.request(
                .POST, "/v1/receipts", body: String(decoding: body, as: UTF8.self),
                headers: [("Idempotency-Key", "receipt-\(self.prefix)-\(index)")])
        } accept: { $0.status == 200 && ["delivered", "already_delivered"].contains($0.outcome ?? "") }
        _ = answer
        state.withLock { $0.done.append(Purchase(index: index, transactionId: bought.transactionId, deliveredAt: .now, attempts: attempts)) }
    }

    /// Calls `call` until `accept` takes its answer; a 503, 202 or transport error is retried
    /// after a short pause. Anything else is a failure of the test.
    private func retrying(
        _ what: String, until end: ContinuousClock.Instant, _ call: () async throws -> LedgerHarness.Answer,
        accept: (LedgerHarness.Answer) -> Bool
    ) async throws -> (LedgerHarness.Answer, Int) {
        var attempts = 0
        while true {
            attempts += 1
            let started = ContinuousClock.now
            do {
                let answer = try await call()
                if accept(answer) {
                    state.withLock { s in
                        if let killed = s.killedAt, started > killed, s.firstSuccessAfterKill == nil { s.firstSuccessAfterKill = .now }
                    }
                    return (answer, attempts)
                }
                guard [503, 202].contains(answer.status) else {
                    throw HAClusterError("\(what) answered \(answer.status) \(answer.json)")
                }
                let reason = "\(answer.status) \(answer.errorCode ?? answer.outcome ?? "")"
                state.withLock { $0.reasons[reason, default: 0] += 1 }
            } catch let error as HAClusterError {
                throw error
            } catch {
                // No answer at all (the server's pool was mid-reconnect, a time-out): try again.
                state.withLock { $0.reasons["no answer: \(type(of: error))", default: 0] += 1 }
            }
            state.withLock { $0.retried += 1 }
            guard ContinuousClock.now < end else { throw HAClusterError("\(what) got no 2xx before the deadline (\(attempts) attempts)") }
            try await Task.sleep(for: .milliseconds(200))
        }
    }
}
