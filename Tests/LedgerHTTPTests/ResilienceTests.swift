import AppleSimulator
import EventStore
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import LedgerStore
import Postgres
import Synchronization
import TestSupport
import Testing
import Spawning

/// Crashes and outages under load: what a 2xx promised is in the log, nothing is doubled.
/// Serialized: both tests start servers and load a 2-core machine; the second stops PostgreSQL
/// (a private cluster, see `RestartableCluster`).
@Suite("Resilience: the server killed, PostgreSQL stopped, under load", .serialized)
struct ResilienceTests {
    static let product = "com.example.coins100"

    @Test(
        "The server process killed with SIGKILL in the middle of purchases and started again: every paid transaction ends delivered exactly once, none twice, and verify passes",
        .timeLimit(.minutes(5)))
    func killedServer() async throws {
        let count = 150
        try await TestDatabase.withSchema { conninfo, pool in
            _ = try await Migrator.ledger().migrate(pool: pool, logger: TestDatabase.logger)
            try await ServedFixture.with(conninfo: conninfo) { fixture in
                let apple = fixture.apple
                // Started again on this port after the kill: a port of the tests' own range, which
                // the kernel hands to no outgoing connection meanwhile (see LoopbackPort).
                let port = try LoopbackPort.freeOutsideEphemeralRange()
                let arguments = ["serve", "--address", "127.0.0.1:\(port)"]
                let first = try fixture.start(arguments)
                let client = fixture.client(port: port)
                try await first.waitUntilHealthy(client)
                let bought = try await Self.buy(count, client: client, simulator: apple.simulator)

                // 8 clients; the one that gets answer number count/3 kills the server.
                let run = KillRun(count: count)
                await run.submit(bought, through: client) { first.send(SIGKILL) }
                await client.shutdown()
                let killed = try await first.waitForExit(within: .seconds(30))
                #expect(killed == ProcessExit(status: SIGKILL, signaled: true))
                let before = run.snapshot
                #expect(before.errorsBeforeKill.isEmpty, "requests failed before the kill: \(before.errorsBeforeKill.prefix(5))")
                #expect(!before.inFlightFailed.isEmpty, "no request was in flight when the server was killed")
                for (index, answer) in before.answered {
                    #expect(
                        answer.status == 200 && answer.outcome == "delivered" && answer.transactionIds.contains(bought[index].purchase.transactionId),
                        "purchase \(index) before the kill: \(answer)")
                }

                // Started again on the same port: the unanswered ones and the rest are submitted.
                let second = try fixture.start(arguments)
                let again = fixture.client(port: port)
                try await second.waitUntilHealthy(again)
                let resubmit = (0..<count).filter { before.answered[$0]?.status != 200 }
                let answers = await Self.submitAll(resubmit, bought: bought, client: again)
                await again.shutdown()
                for index in resubmit {
                    switch answers[index] {
                    case .success(let answer):
                        #expect(
                            answer.status == 200 && ["delivered", "already_delivered"].contains(answer.outcome ?? "")
                                && answer.transactionIds.contains(bought[index].purchase.transactionId),
                            "purchase \(index) after the restart: \(answer)")
                    case .failure(let error):
                        Issue.record("purchase \(index) after the restart: no answer: \(error)")
                    case nil:
                        Issue.record("purchase \(index) was not resubmitted")
                    }
                }

                let counts = { () async throws -> (distinct: Int64, total: Int64) in
                    try await pool.withConnection { connection in
                        let row = try connection.query(
                            "SELECT count(DISTINCT payload->>'transaction_id'), count(*) FROM events WHERE event_type = 'PurchaseDelivered'")[0]
                        return try (distinct: row.decode(0, as: Int64.self), total: row.decode(1, as: Int64.self))
                    }
                }
                try await waitUntil("every purchase is delivered", within: .seconds(30)) { try await counts().distinct >= Int64(count) }
                let totals = try await counts()
                #expect(totals.distinct == Int64(count), "distinct delivered transactions")
                #expect(totals.total == Int64(count), "PurchaseDelivered events: none twice")

                let verify = try await LedgerProcess.run(["verify"], environment: ["DATABASE_URL": conninfo])
                #expect(verify.exit == ProcessExit(status: 0, signaled: false), "\(verify.output)")
                #expect(verify.output.contains("chain verified"), "\(verify.output)")
                #expect(verify.output.contains("documents verified"), "\(verify.output)")

                second.send(SIGTERM)
                let stopped = try await second.waitForExit(within: .seconds(30))
                #expect(stopped == ProcessExit(status: 0, signaled: false), "graceful shutdown:\n\(second.outputTail())")
            }
        }
    }

    /// Orders `count` purchases through the API and buys each on the simulator with its order's
    /// token, each by an Apple ID of its own (so each receipt holds one transaction).
    static func buy(_ count: Int, client: LedgerClient, simulator: AppleSimulator) async throws -> [Bought] {
        var bought: [Bought] = []
        for index in 0..<count {
            let user = "user-\(index)"
            let order = try await client.post("/v1/orders", ["user_id": user, "product_id": product])
            guard order.status == 201, let token = order.json["app_account_token"] as? String else {
                throw HarnessError("order \(index) failed: \(order.status) \(order.json)")
            }
            let purchase = try await simulator.purchase(
                appleId: "apple-\(index)", productId: product, environment: .production, appAccountToken: UUID(uuidString: token))
            bought.append(Bought(user: user, purchase: purchase))
        }
        return bought
    }

    /// Submits the purchases at `indices` from 8 concurrent clients.
    static func submitAll(_ indices: [Int], bought: [Bought], client: LedgerClient) async -> [Int: Result<Submitted, any Error>] {
        await withTaskGroup(of: [(Int, Result<Submitted, any Error>)].self) { group in
            for lane in 0..<8 {
                let mine = stride(from: lane, to: indices.count, by: 8).map { indices[$0] }
                group.addTask {
                    var results: [(Int, Result<Submitted, any Error>)] = []
                    for index in mine {
                        do {
                            results.append((index, .success(Submitted(try await client.submit(bought[index])))))
                        } catch {
                            results.append((index, .failure(error)))
                        }
                    }
                    return results
                }
            }
            var all: [Int: Result<Submitted, any Error>] = [:]
            for await lane in group {
                for (index, result) in lane { all[index] = result }
            }
            return all
        }
    }
}

/// A purchase made on the simulated device, and the user it was made for.
struct Bought: Sendable {
    var user: String
    var purchase: PurchaseResult
}

/// What a `POST /v1/receipts` answered, kept.
struct Submitted: Sendable, CustomStringConvertible {
    var status: Int
    var outcome: String?
    var transactionIds: [String]
    var body: String

    init(_ answer: LedgerHarness.Answer) {
        status = answer.status
        outcome = answer.outcome
        transactionIds = answer.deliveries.compactMap { $0["transaction_id"] as? String }
        body = "\(answer.json)"
    }

    var description: String { "HTTP \(status) \(body)" }
}

extension LedgerClient {
    func submit(_ bought: Bought) async throws -> LedgerHarness.Answer {
        try await post("/v1/receipts", [
            "user_id": bought.user, "receipt_data": bought.purchase.receiptData, "transaction_id": bought.purchase.transactionId,
        ])
    }
}

/// The first phase of the kill test: who takes which purchase, what was answered, and whether
/// the server was killed (then nobody takes another purchase).
final class KillRun: Sendable {
    struct State: Sendable {
        var next = 0
        var killed = false
        var answered: [Int: Submitted] = [:]
        /// Purchases whose request failed after the kill (in flight when it happened).
        var inFlightFailed: [Int] = []
        var errorsBeforeKill: [String] = []
    }

    let count: Int
    private let state = Mutex(State())

    init(count: Int) { self.count = count }

    var snapshot: State { state.withLock { $0 } }

    func next() -> Int? {
        state.withLock { state in
            guard !state.killed, state.next < count else { return nil }
            state.next += 1
            return state.next - 1
        }
    }

    /// Records an answer; true for the one caller that must kill the server now.
    func answered(_ index: Int, _ answer: Submitted) -> Bool {
        state.withLock { state in
            state.answered[index] = answer
            guard !state.killed, state.answered.count >= count / 3 else { return false }
            state.killed = true
            return true
        }
    }

    /// Submits `bought` from 8 concurrent clients until every purchase is taken or the server
    /// is interrupted; the client whose answer is number count/3 calls `interrupt` (a SIGKILL,
    /// a SIGTERM), after which nobody takes another purchase.
    func submit(_ bought: [Bought], through client: LedgerClient, interrupt: @escaping @Sendable () -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    while let index = self.next() {
                        do {
                            let answer = try await client.submit(bought[index])
                            if self.answered(index, Submitted(answer)) { interrupt() }
                        } catch {
                            self.failed(index, error)
                        }
                    }
                }
            }
        }
    }

    func failed(_ index: Int, _ error: any Error) {
        state.withLock { state in
            if state.killed {
                state.inFlightFailed.append(index)
            } else {
                state.errorsBeforeKill.append("\(index): \(error)")
            }
        }
    }
}
