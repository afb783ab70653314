import AppleSimulator
import Foundation
import Postgres
import Synchronization
import Testing

extension ResilienceTests {
    @Test(
        "PostgreSQL stopped and started in the middle of a load: 503s while it is down, no 2xx lost, the pool recovers, nothing doubled",
        .timeLimit(.minutes(5)))
    func postgresOutage() async throws {
        // A cluster of this test's own: stopping the shared one would fail the tests running beside.
        let cluster = try await RestartableCluster.create()
        do {
            try await LedgerHarness.with(database: cluster.conninfo) { ledger in
                try await Self.playOutage(ledger, cluster: cluster)
            }
        } catch {
            await cluster.destroy()
            throw error
        }
        await cluster.destroy()
    }

    static func playOutage(_ ledger: LedgerHarness, cluster: RestartableCluster) async throws {
        let log = OutageLog()
        let load = Task {
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<4 {
                    group.addTask {
                        var iteration = 0
                        while log.phase != .stopped {
                            iteration += 1
                            await ResilienceTests.loadStep(ledger, log, name: "\(worker)-\(iteration)")
                        }
                    }
                }
            }
        }
        do {
            // The whole suite shares two cores while this cluster starts: the first 20 took 60 s
            // there once (4 s alone). The test checks the outage, not the speed before it.
            try await ledger.eventually("the load delivered 20 purchases", within: .seconds(180)) { log.snapshot.delivered.count >= 20 }
            log.set(.stopping)
            try await cluster.stop()
            log.set(.down)
            try await ledger.eventually("20 answers while PostgreSQL is down", within: .seconds(30)) { log.snapshot.strictlyDown >= 20 }
            let health = try await ledger.get("/healthz", token: nil)
            #expect(health.status == 503)
            #expect(health.errorCode == "database_unavailable")
            #expect(health.header("Retry-After") == "1")
            log.set(.starting)
            try await cluster.start()
            try await ledger.eventually("/healthz answers 200 again", within: .seconds(30)) {
                (try? await ledger.get("/healthz", token: nil))?.status == 200
            }
            log.set(.recovered)
            try await ledger.eventually("the pool serves the load again", within: .seconds(30)) { log.snapshot.deliveredAfterRecovery >= 10 }
        } catch {
            log.set(.stopped)
            await load.value
            throw error
        }
        log.set(.stopped)
        await load.value

        let seen = log.snapshot
        #expect(seen.violations.isEmpty, "\(seen.violations.count) violations: \(seen.violations.prefix(10).joined(separator: "\n"))")
        #expect(seen.strictlyDown >= 20)
        #expect(!seen.refused.isEmpty, "no receipt was refused while PostgreSQL was down")

        // What was refused is accepted when sent again, once PostgreSQL is back.
        for bought in seen.refused {
            let id = bought.purchase.transactionId
            try await ledger.eventually("resubmitting \(id) is answered", within: .seconds(20)) {
                let answer = try await ledger.submit(user: bought.user, purchase: bought.purchase)
                if answer.status == 503 { return false }
                let delivered = Submitted(answer)
                #expect(
                    delivered.status == 200 && ["delivered", "already_delivered"].contains(delivered.outcome ?? "")
                        && delivered.transactionIds.contains(id),
                    "resubmitting \(id): \(delivered)")
                return true
            }
        }

        let counts = try await deliveredCounts(ledger.pool)
        let doubled = counts.filter { $0.value > 1 }
        #expect(doubled.isEmpty, "delivered more than once: \(doubled)")
        for id in seen.delivered {
            #expect(counts[id] == 1, "\(id) was answered 200 but the log holds \(counts[id] ?? 0) PurchaseDelivered")
        }
        for bought in seen.refused {
            #expect(counts[bought.purchase.transactionId] == 1, "refused, then resubmitted: \(bought.purchase.transactionId)")
        }
        let paid = Set(seen.bought.map(\.purchase.transactionId))
        #expect(Set(counts.keys) == paid, "every purchase paid during the run is delivered, and nothing else")
    }

    /// One client step: an order (refused while PostgreSQL is down: then the purchase is made
    /// without its token), the purchase on the simulator, its receipt.
    static func loadStep(_ ledger: LedgerHarness, _ log: OutageLog, name: String) async {
        let user = "load-\(name)"
        do {
            let orderStart = log.phase
            let order = try await ledger.post("/v1/orders", ["user_id": user, "product_id": product])
            log.record("POST /v1/orders", order, from: orderStart, success: 201)
            let token = order.status == 201 ? (order.json["app_account_token"] as? String).flatMap { UUID(uuidString: $0) } : nil
            let purchase = try await ledger.simulator.purchase(
                appleId: "apple-\(name)", productId: product, environment: .production, appAccountToken: token)
            let bought = Bought(user: user, purchase: purchase)
            let receiptStart = log.phase
            let answer = try await ledger.submit(user: user, purchase: purchase)
            log.record(receipt: answer, from: receiptStart, bought: bought)
            if order.status == 503 || answer.status == 503 { await Task.yield() }
        } catch {
            log.violation("\(user): no HTTP answer (the HTTP server stays up): \(error)")
        }
    }

    /// PurchaseDelivered events per transaction id; tries again while the pool's connections
    /// that died with the old server are found and replaced.
    static func deliveredCounts(_ pool: ConnectionPool) async throws -> [String: Int64] {
        var counts: [String: Int64]?
        var lastError: (any Error)?
        try await waitUntil("the log can be read again", within: .seconds(10)) {
            do {
                counts = try await pool.withConnection { connection in
                    var counts: [String: Int64] = [:]
                    let rows = try connection.query(
                        "SELECT payload->>'transaction_id', count(*) FROM events WHERE event_type = 'PurchaseDelivered' GROUP BY 1")
                    for row in rows {
                        counts[try row.decode(0, as: String.self)] = try row.decode(1, as: Int64.self)
                    }
                    return counts
                }
                return true
            } catch {
                lastError = error
                return false
            }
        }
        guard let counts else { throw lastError ?? HarnessError("no counts") }
        return counts
    }
}
