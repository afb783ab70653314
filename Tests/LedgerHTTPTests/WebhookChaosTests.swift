import AppStoreClient
import AppleSimulator
import EventStore
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import LedgerStore
import LedgerWebhooks
import NIOCore
import NIOHTTP1
import Postgres
import Spawning
import Synchronization
import TestSupport
import Testing

/// Webhooks delivered by `purchase-ledger serve` processes under trouble: a receiver that
/// refuses a third of its calls at random and is unreachable for a while, a server killed with
/// SIGKILL mid-delivery and started again, two servers on one database. Serialized: both tests
/// start server processes and load a 2-core machine.
@Suite("Webhooks under chaos: refusals, an outage, a killed server, two servers", .serialized)
struct WebhookChaosTests {
    static let coins = "com.example.coins100"
    static let monthly = "com.example.pro.monthly"
    /// The chaos test's purchases; spends, refunds and renewals come on top.
    static let purchases = 200

    @Test(
        "a flaky, then unreachable receiver, two endpoints, 200 purchases with spends, refunds and renewals from 8 clients, a SIGKILL mid-delivery: every message reaches both, once each after deduplication, in each user's log order, every signature valid",
        .timeLimit(.minutes(10)))
    func chaos() async throws {
        try await TestDatabase.withSchema { conninfo, pool in
            _ = try await Migrator.ledger().migrate(pool: pool, logger: TestDatabase.logger)
            let answers = FlakyAnswers()
            let flaky = WebhookReceiver(signer: try WebhookFlowTests.signer()) { answers.answer($0) }
            let steady = WebhookReceiver(signer: try WebhookFlowTests.signer()) { _ in 204 }
            // steady is reached through a gate that can keep requests unanswered, so the server
            // can be killed while one of its deliveries is in flight.
            let gate = WebhookChaosGate()
            // flaky goes down and comes back on its port: one of the tests' own range, which the
            // kernel hands to no outgoing connection meanwhile (see LoopbackPort).
            let flakyPort = try LoopbackPort.freeOutsideEphemeralRange()
            let receivers = ["flaky": flaky, "steady": steady]
            try await WebhookProcessRig.with(
                conninfo: conninfo, receivers: [("flaky", flaky, flakyPort), ("steady", steady, 0)], gates: ["steady": gate]
            ) { rig in
                let port = try LoopbackPort.freeOutsideEphemeralRange()
                // 8 clients, each its own HTTP client and connections, one per lane of operations.
                let first = try await rig.startServer(port: port, clients: 8)
                let simulator = rig.apple.simulator
                simulator.notificationURL = "http://127.0.0.1:\(port)/v1/notifications/apple"
                let run = ChaosRun(simulator: simulator, pool: pool)

                try await Self.operate(0..<60, clients: first.clients, run: run)
                // Renews the subscriptions bought so far.
                _ = try await simulator.advance(days: 32)

                // flaky unreachable for 20 s while operations, the kill and the restart go on.
                await flaky.goDown()
                rig.outage = Task {
                    try await Task.sleep(for: .seconds(20))
                    // The deliverer's failures through the outage count toward flaky's cap on
                    // refusals (see FlakyAnswers), read before it can answer again.
                    answers.countFailures(try await Self.failedAttempts(at: "flaky", pool))
                    try await flaky.comeBack()
                }
                try await Self.operate(60..<110, clients: first.clients, run: run)

                // The kill, mid-delivery: steady's gate holds what reaches it, one more purchase
                // makes messages, and the server is killed while a request it sent waits at the
                // gate, younger than the sender's time-out (so the sender still waits for it).
                gate.hold()
                try await Self.operate(110..<111, clients: first.clients, run: run)
                try await waitUntil("a message to steady waits at its gate", within: .seconds(30)) { !gate.held.isEmpty }
                let projected = try await Self.projectedIds(pool)
                let waiting = Self.missing(projected, from: receivers)
                #expect(waiting["flaky"] != nil, "flaky, unreachable, acknowledged every message before the kill")
                let senderWaits = Duration.nanoseconds(WebhookSender.timeout.nanoseconds)
                let inFlight = gate.held.filter { ContinuousClock.now - $0.since < senderWaits }
                #expect(!inFlight.isEmpty, "no delivery was in flight at the kill: held \(gate.held)")
                try await rig.kill(first.process)
                // What was held never reaches steady from the killed server: only a resend can.
                let dropped = gate.dropHeld()
                let second = try await rig.startServer(port: port, clients: 8)

                try await Self.operate(111..<160, clients: second.clients, run: run)
                _ = try await simulator.advance(days: 32)
                try await Self.operate(160..<Self.purchases, clients: second.clients, run: run)
                if let outage = rig.outage { try await outage.value }

                // Retries back off: a message refused through the outage and then by flaky may
                // wait a minute or two for its next attempt (FlakyAnswers).
                let expected = try await Self.everyMessage(acknowledgedBy: receivers, pool: pool, within: .seconds(240))
                let done = run.tally.current
                #expect(done.purchases == Self.purchases)
                #expect(done.spends > 0 && done.refunds > 0 && !done.subscriptions.isEmpty, "\(done)")
                let types = Self.expectedTypes(done, simulator: simulator)
                #expect(types["subscription.renewed"] != nil, "Apple renewed no subscription")
                for (name, receiver) in receivers.sorted(by: { $0.key < $1.key }) {
                    Self.expectExactly(expected, types: types, toldTo: receiver, name: name)
                }
                let neverResent = Set(dropped.map { $0.id }).subtracting(steady.acknowledged.map { $0.id })
                #expect(neverResent.isEmpty, "held at the kill and not sent again: \(neverResent.sorted())")

                // A third of flaky's calls refused (the cap binds rarely), retries among them.
                let calls = flaky.arrivals.filter { $0.signatureValid }
                let refused = calls.filter { $0.status == 500 }.count
                let share = Double(refused) / Double(max(calls.count, 1))
                #expect((0.27...0.40).contains(share), "flaky refused \(refused) of \(calls.count) calls")
                #expect(flaky.arrivals.count > Set(flaky.arrivals.map { $0.id }).count, "flaky got no message twice")

                try await waitUntil("both endpoints report no backlog", within: .seconds(60)) {
                    try await Self.statuses(pool).allSatisfy { $0.backlog == 0 }
                }
                let status = try await Self.statuses(pool)
                #expect(status.map { $0.name } == ["flaky", "steady"])
                #expect(status.allSatisfy { $0.backlog == 0 }, "\(status)")

                try await rig.stopGracefully(second.process)
            }
        }
    }

    @Test("two servers on one database deliver each message once per attempt", .timeLimit(.minutes(5)))
    func twoServers() async throws {
        try await TestDatabase.withSchema { conninfo, pool in
            _ = try await Migrator.ledger().migrate(pool: pool, logger: TestDatabase.logger)
            let backend = WebhookReceiver(signer: try WebhookFlowTests.signer()) { _ in 204 }
            let receivers = ["backend": backend]
            try await WebhookProcessRig.with(conninfo: conninfo, receivers: [("backend", backend, 0)]) { rig in
                let ports = try Self.twoPorts()
                // Started one after the other: each loads the catalog at start.
                let first = try await rig.startServer(port: ports.0)
                let second = try await rig.startServer(port: ports.1)
                let simulator = rig.apple.simulator
                simulator.notificationURL = "http://127.0.0.1:\(ports.0)/v1/notifications/apple"

                try await Self.buyCoins(0..<60, clients: [first.client, second.client], simulator: simulator)
                let expected = try await Self.everyMessage(acknowledgedBy: receivers, pool: pool, within: .seconds(120))
                // The receiver acknowledges every request: a second arrival would mean both servers
                // sent it. That holds for the chain digests too, which either server may publish.
                let byId = Dictionary(grouping: backend.arrivals) { $0.id }
                #expect(Set(byId.keys.filter { !$0.hasPrefix("dig_") }) == expected)
                let repeated = byId.filter { $0.value.count != 1 }.keys.sorted()
                #expect(repeated.isEmpty, "sent more than once: \(repeated.prefix(10))")
                #expect(backend.arrivals.allSatisfy { $0.signatureValid })

                // The lease holder killed: the survivor takes the lease once it lapses (20 s).
                let owner = try await Self.leaseOwner("backend", pool) ?? ""
                guard let holder = [first, second].first(where: { owner.contains("/\($0.process.pid)/") }) else {
                    throw HarnessError("neither server (\(first.process.pid), \(second.process.pid)) holds the lease: '\(owner)'")
                }
                let survivor = holder.process === first.process ? second : first
                try await rig.kill(holder.process)
                simulator.notificationURL = "http://127.0.0.1:\(survivor.port)/v1/notifications/apple"
                try await Self.buyCoins(60..<80, clients: [survivor.client], simulator: simulator)
                // Messages in flight at the kill may come twice: only completeness is checked here.
                let all = try await Self.everyMessage(acknowledgedBy: receivers, pool: pool, within: .seconds(120))
                #expect(all.isSuperset(of: expected.filter { !$0.hasPrefix("dig_") }))
                #expect(all.count > expected.count, "the purchases after the kill made no message")
                #expect(backend.arrivals.allSatisfy { $0.signatureValid })

                try await rig.stopGracefully(survivor.process)
            }
        }
    }

    // MARK: - Operations

    /// Runs the operations `range` from 8 concurrent lanes, lane `index % 8` through
    /// `clients[lane]`; the lane's users (40 in all) are its own, so each user's operations run
    /// one after another and `run.wallets` knows the balance a spend may take.
    static func operate(_ range: Range<Int>, clients: [LedgerClient], run: ChaosRun) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<8 {
                let client = clients[lane % clients.count]
                group.addTask {
                    for index in range where index % 8 == lane {
                        try await Self.perform(index, client: client, run: run)
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    static func owner(of index: Int) -> String {
        "chaos-user-\(index % 8 + 8 * ((index / 8) % 5))"
    }

    /// The Apple ID purchase `index` is made with: its own, so its receipt holds that one
    /// purchase, and a subscription's renewals are that Apple ID's later transactions.
    static func appleId(_ index: Int) -> String { "chaos-apple-\(index)" }

    /// Purchase `index`, then perhaps another operation of the same user, drawn from the
    /// simulator's SplitMix64 seeded with `index` (a run can be made again): one purchase in
    /// eight a monthly subscription, the rest coin packs; then three times in ten a spend of 10
    /// to 60 coins (when the user has 10), twice in ten a refund of one of the user's coin packs
    /// not refunded yet (when there is one), else nothing. So every index is one purchase, and
    /// spends and refunds come on top. Each is tallied once its answer says it happened.
    static func perform(_ index: Int, client: LedgerClient, run: ChaosRun) async throws {
        var generator = SeededGenerator(seed: UInt64(index))
        let user = Self.owner(of: index)
        if Int.random(in: 0..<8, using: &generator) == 0 {
            _ = try await buy(monthly, index: index, user: user, client: client, simulator: run.simulator)
            let appleId = Self.appleId(index)
            run.tally.record { $0.subscriptions.append(appleId) }
        } else {
            let purchase = try await buy(coins, index: index, user: user, client: client, simulator: run.simulator)
            run.wallets.update(user) { entry in
                entry.coins += 100
                entry.refundable.append(purchase.transactionId)
            }
            run.tally.record { $0.coinPacks += 1 }
        }
        let wallet = run.wallets.wallet(user)
        switch Int.random(in: 0..<10, using: &generator) {
        case 0..<3 where wallet.coins >= 10:
            let amount = min(wallet.coins, Int.random(in: 10...60, using: &generator))
            try await spend(amount, index: index, user: user, client: client)
            run.wallets.update(user) { $0.coins -= amount }
            run.tally.record { $0.spends += 1 }
        case 3..<5 where !wallet.refundable.isEmpty:
            let transactionId = wallet.refundable[Int.random(in: 0..<wallet.refundable.count, using: &generator)]
            try await refund(transactionId, simulator: run.simulator, pool: run.pool)
            run.wallets.update(user) { entry in
                entry.coins -= 100
                entry.refundable.removeAll { $0 == transactionId }
            }
            run.tally.record { $0.refunds += 1 }
        default:
            break
        }
    }

    /// Orders `product` for `user`, buys it on the simulator with the order's token (an Apple ID
    /// of its own, so its receipt holds this one transaction) and submits the receipt.
    static func buy(_ product: String, index: Int, user: String, client: LedgerClient, simulator: AppleSimulator) async throws -> PurchaseResult {
        let order = try await client.post("/v1/orders", ["user_id": user, "product_id": product])
        guard order.status == 201, let token = order.json["app_account_token"] as? String else {
            throw HarnessError("order \(index) failed: \(order.status) \(order.json)")
        }
        let purchase = try await simulator.purchase(
            appleId: Self.appleId(index), productId: product, environment: .production, appAccountToken: UUID(uuidString: token))
        try await submitUntilDelivered(Bought(user: user, purchase: purchase), client: client)
        return purchase
    }

    /// Submits a receipt until it is delivered: a 202 (Apple slow to answer on a loaded machine)
    /// means the ledger keeps it, and the client may submit again.
    static func submitUntilDelivered(_ bought: Bought, client: LedgerClient) async throws {
        for _ in 0..<30 {
            let answer = try await client.submit(bought)
            if answer.status == 200, ["delivered", "already_delivered"].contains(answer.outcome ?? "") { return }
            guard answer.status == 202 else {
                throw HarnessError("receipt of \(bought.purchase.transactionId) for \(bought.user): \(Submitted(answer))")
            }
            try await Task.sleep(for: .milliseconds(500))
        }
        throw HarnessError("receipt of \(bought.purchase.transactionId) for \(bought.user) still pending")
    }

    static func spend(_ amount: Int, index: Int, user: String, client: LedgerClient) async throws {
        let body: [String: Any] = ["unit": "coins", "amount": amount, "spend_id": "chaos-spend-\(index)"]
        let data = try JSONSerialization.data(withJSONObject: body)
        let answer = try await client.request(.POST, "/v1/users/\(user)/spend", body: String(decoding: data, as: UTF8.self))
        guard answer.status == 200 else {
            throw HarnessError("spend \(index) of \(amount) by \(user): HTTP \(answer.status) \(answer.json)")
        }
    }

    /// Refunds on the simulator, which tells the server; waits until the refund is in the log,
    /// so the wallet's balance is the ledger's before the user's next spend.
    static func refund(_ transactionId: String, simulator: AppleSimulator, pool: ConnectionPool) async throws {
        _ = try await simulator.refund(transactionId: transactionId, reason: 0)
        try await waitUntil("the refund of \(transactionId) is in the log", within: .seconds(30)) {
            try await pool.withConnection { connection in
                try connection.query("""
                    SELECT count(*) FROM events WHERE event_type = 'PurchaseRefunded' AND payload->>'transaction_id' = \(transactionId)
                    """)[0].decode(0, as: Int64.self)
            } > 0
        }
    }

    /// Buys coins for 16 users from 8 concurrent clients, purchase `index` through
    /// `clients[index % clients.count]`.
    static func buyCoins(_ range: Range<Int>, clients: [LedgerClient], simulator: AppleSimulator) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<8 {
                group.addTask {
                    for index in range where index % 8 == lane {
                        _ = try await Self.buy(
                            Self.coins, index: index, user: "pair-user-\(index % 16)", client: clients[index % clients.count], simulator: simulator)
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    // MARK: - What arrived

    /// The messages each endpoint must be told, by type, from what the operations did and what
    /// Apple renewed, as WebhookFold maps them: a `purchase.delivered` per purchase; a
    /// `balance.changed` per coin pack bought (+100), per spend, and per coin pack refunded
    /// (-100: the ledger takes back all of it, whatever the user spent); a `purchase.refunded`
    /// per refund; a `subscription.renewed` per period Apple renewed (each subscription has an
    /// Apple ID of its own, whose later transactions are its renewals). Nothing else: no
    /// subscription ends or changes auto-renew here, and no purchase changes owner. Types
    /// with none are left out.
    static func expectedTypes(_ done: ChaosTally.Counts, simulator: AppleSimulator) -> [String: Int] {
        let renewals = done.subscriptions.map { simulator.transactions(of: $0).count - 1 }.reduce(0, +)
        let types = [
            "purchase.delivered": done.purchases,
            "balance.changed": done.coinPacks + done.spends + done.refunds,
            "purchase.refunded": done.refunds,
            "subscription.renewed": renewals,
        ]
        return types.filter { $0.value > 0 }
    }

    /// Asserts what one receiver acknowledged: exactly `expected` (the projection's messages),
    /// as many of each type as `types` says, every arrival signed and one of them, and each
    /// user's first acknowledgements in log order.
    /// The servers publish chain digests (`ledger.digest`, not made from ledger events) as well:
    /// those are checked for their shape and signature and left out of the comparison.
    static func expectExactly(_ expected: Set<String>, types: [String: Int], toldTo receiver: WebhookReceiver, name: String) {
        let digests = receiver.arrivals.filter { $0.type == "ledger.digest" }
        #expect(digests.allSatisfy { $0.id.wholeMatch(of: /dig_[0-9]+_[0-9a-f]{16}/) != nil && $0.signatureValid }, "\(name): a malformed digest")
        let told = receiver.acknowledged.filter { $0.type != "ledger.digest" }
        let arrivals = receiver.arrivals.filter { $0.type != "ledger.digest" }
        let ids = Set(told.map { $0.id })
        #expect(ids == expected, "\(name): \(ids.subtracting(expected).count) extra, \(expected.subtracting(ids).count) missing")
        #expect(Set(arrivals.map { $0.id }).isSubset(of: expected), "\(name) got a message the log does not hold")
        #expect(arrivals.allSatisfy { $0.signatureValid }, "\(name) got an unsigned or badly signed message")

        let counted = Dictionary(grouping: told) { $0.type }.mapValues { $0.count }
        #expect(
            counted == types,
            "\(name) was told \(counted.sorted { $0.key < $1.key }), the operations call for \(types.sorted { $0.key < $1.key })")

        // The first acknowledgement of each message, per user, follows log order.
        var byUser: [String: [(Int, Int)]] = [:]
        for arrival in told {
            byUser[arrival.data["user_id"] as? String ?? "", default: []].append(WebhookFlowTests.order(arrival.id))
        }
        for (user, order) in byUser.sorted(by: { $0.key < $1.key }) {
            #expect(zip(order, order.dropFirst()).allSatisfy { $0 < $1 }, "\(name): \(user)'s messages out of log order: \(order)")
        }
    }

    /// Waits until the webhook projection has caught up with the log and each receiver
    /// acknowledged every one of its messages; returns their ids.
    static func everyMessage(acknowledgedBy receivers: [String: WebhookReceiver], pool: ConnectionPool, within limit: Duration) async throws -> Set<String> {
        let deadline = ContinuousClock.now + limit
        var last = "the webhook projection never caught up with the log"
        while ContinuousClock.now < deadline {
            if try await projectionCaughtUp(pool) {
                let expected = try await projectedIds(pool)
                let lacking = Self.missing(expected, from: receivers)
                if lacking.isEmpty { return expected }
                last = lacking.sorted { $0.key < $1.key }
                    .map { "\($0.key) lacks \($0.value.count) of \(expected.count), such as \($0.value.sorted().prefix(5))" }
                    .joined(separator: "; ")
            }
            try await Task.sleep(for: .milliseconds(500))
        }
        throw HarnessError("not every message was acknowledged within \(limit): \(last)")
    }

    /// Per receiver, the ids of `expected` it has not acknowledged; receivers lacking none are left out.
    static func missing(_ expected: Set<String>, from receivers: [String: WebhookReceiver]) -> [String: Set<String>] {
        receivers.mapValues { expected.subtracting($0.acknowledged.map { $0.id }) }.filter { !$0.value.isEmpty }
    }

    // MARK: - The database

    /// The ids (`webhook-id`) of every message of the webhook projection.
    static func projectedIds(_ pool: ConnectionPool) async throws -> Set<String> {
        try await pool.withConnection { connection in
            let rows = try connection.query("SELECT position, sequence, hash_prefix FROM projection_webhook_events")
            let ids = try rows.map { row in
                let position = try row.decode(0, as: Int64.self)
                let sequence = try row.decode(1, as: Int32.self)
                return "evt_\(position)_\(try row.decode(2, as: String.self))_\(sequence)"
            }
            return Set(ids)
        }
    }

    /// Whether the webhook projection has applied every event of the log.
    static func projectionCaughtUp(_ pool: ConnectionPool) async throws -> Bool {
        try await pool.withConnection { connection in
            let applied = try connection.query("SELECT position FROM projection_checkpoints WHERE name = 'webhook_events'")
                .first?.decode(0, as: Int64.self) ?? -1
            let head = try connection.query("SELECT coalesce(max(position), 0) FROM events")[0].decode(0, as: Int64.self)
            return applied >= head
        }
    }

    /// The deliverer's failed attempts of each outstanding message of `endpoint`, by
    /// `webhook-id`, plus one: a pass under way while this reads may record one more.
    static func failedAttempts(at endpoint: String, _ pool: ConnectionPool) async throws -> [String: Int] {
        try await pool.withConnection { connection in
            var attempts: [String: Int] = [:]
            for row in try connection.query("""
                SELECT o.position, o.sequence, o.attempts, m.hash_prefix FROM webhook_outstanding o
                JOIN projection_webhook_events m ON m.position = o.position AND m.sequence = o.sequence
                WHERE o.endpoint = \(endpoint) AND o.attempts > 0
                """) {
                let position = try row.decode(0, as: Int64.self)
                let sequence = try row.decode(1, as: Int32.self)
                attempts["evt_\(position)_\(try row.decode(3, as: String.self))_\(sequence)"] = Int(try row.decode(2, as: Int32.self)) + 1
            }
            return attempts
        }
    }

    static func statuses(_ pool: ConnectionPool) async throws -> [WebhookEndpointStatus] {
        try await pool.withConnection { try WebhookStatus.endpoints(on: $0) }
    }

    /// The endpoint's `lease_owner` (`host/pid/uuid8`), expired or not.
    static func leaseOwner(_ endpoint: String, _ pool: ConnectionPool) async throws -> String? {
        try await pool.withConnection { connection in
            try connection.query("SELECT lease_owner FROM webhook_endpoints WHERE name = \(endpoint)").first?.decode(0, as: String?.self)
        }
    }

    /// Two distinct ports of the tests' own range.
    static func twoPorts() throws -> (Int, Int) {
        let first = try LoopbackPort.freeOutsideEphemeralRange()
        var second = try LoopbackPort.freeOutsideEphemeralRange()
        while second == first { second = try LoopbackPort.freeOutsideEphemeralRange() }
        return (first, second)
    }
}

// MARK: - Helpers

/// The flaky receiver's answers: 500 to each call with odds of one in three, drawn from the
/// simulator's SplitMix64 seeded with the call's `webhook-id` and its number among that id's
/// calls, so a run draws the same for the same call whatever order the calls arrive in.
///
/// Capped: a message is refused only while the deliverer has failed it fewer than
/// `maximumFailures` times. Its back-off doubles with each failure (WebhookBackoff: 2^n s up
/// to an hour, which a `serve` process gives tests no way to shorten), so a 7th failure would
/// wait up to 128 s for the next attempt and an 8th up to 256 s, past what the test may run;
/// yet some 700 calls at odds of 1/3 make a run of 5 or 6 likely somewhere, and a message that
/// failed all through the 20 s outage comes back with 4 or 5 failures already. The cap binds
/// rarely: the test checks that about a third of all calls were refused.
final class FlakyAnswers: Sendable {
    /// At most 6 failures per message: its longest wait for a retry is 64 s.
    static let maximumFailures = 6

    private struct State {
        /// Calls so far, per id.
        var calls: [String: Int] = [:]
        /// Failed attempts per id as the deliverer counts them, or more: this receiver's
        /// refusals, raised to what the deliverer recorded while it could not be reached.
        var failures: [String: Int] = [:]
    }

    private let state = Mutex(State())

    func answer(_ id: String) -> Int {
        state.withLock { state in
            let call = state.calls[id, default: 0]
            state.calls[id] = call + 1
            var generator = SeededGenerator(seed: Self.seed(id, call: call))
            guard Int.random(in: 0..<3, using: &generator) == 0, state.failures[id, default: 0] < Self.maximumFailures else { return 204 }
            state.failures[id, default: 0] += 1
            return 500
        }
    }

    /// Counts the deliverer's failed attempts of each message (by `webhook-id`) while this
    /// receiver could not be reached.
    func countFailures(_ attempts: [String: Int]) {
        state.withLock { state in
            for (id, count) in attempts { state.failures[id] = max(state.failures[id, default: 0], count) }
        }
    }

    /// FNV-1a of the id and the call's number (Swift's `Hasher` is seeded anew in each process).
    static func seed(_ id: String, call: Int) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "\(id)#\(call)".utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return hash
    }
}

/// What the chaos test's operations share: the simulator and the database they act on, what
/// the test knows of each user's coins, and what the operations did.
struct ChaosRun: Sendable {
    let simulator: AppleSimulator
    let pool: ConnectionPool
    let wallets = CoinWallets()
    let tally = ChaosTally()
}

/// What the chaos test's operations did, counted from their own answers (a receipt delivered,
/// a spend answered 200, a refund the test asked Apple for found in the log): the messages to
/// expect, known without the server's webhook projection.
final class ChaosTally: Sendable {
    struct Counts: Sendable {
        var coinPacks = 0
        /// The Apple ID of each subscription bought (the simulator knows its renewals).
        var subscriptions: [String] = []
        var spends = 0
        var refunds = 0

        var purchases: Int { coinPacks + subscriptions.count }
    }

    private let counts = Mutex(Counts())

    func record(_ change: (inout Counts) -> Void) {
        counts.withLock { change(&$0) }
    }

    var current: Counts { counts.withLock { $0 } }
}

/// What the test knows of each user's coins and of their coin purchases not refunded yet.
final class CoinWallets: Sendable {
    struct Wallet: Sendable {
        var coins = 0
        var refundable: [String] = []
    }

    private let wallets = Mutex<[String: Wallet]>([:])

    func wallet(_ user: String) -> Wallet {
        wallets.withLock { $0[user] ?? Wallet() }
    }

    func update(_ user: String, _ change: (inout Wallet) -> Void) {
        wallets.withLock { change(&$0[user, default: Wallet()]) }
    }
}

/// What a webhook process test starts: the simulator, a folder with its root certificate and
/// the catalog, webhook receivers and the gates in front of some, `serve` processes and their
/// clients, and an outage task.
/// `with` stops all of it on every path; when the body fails, servers still running are killed
/// and their output is reported.
final class WebhookProcessRig {
    struct Server {
        let process: LedgerProcess
        /// Clients of their own, each an HTTP client with its own connections.
        let clients: [LedgerClient]
        let port: Int

        var client: LedgerClient { clients[0] }
    }

    let apple: RunningAppleSimulator
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pl-webhook-chaos-\(UUID().uuidString)")
    private(set) var environment: [String: String] = [:]
    private var receivers: [WebhookReceiver] = []
    private var gates: [WebhookChaosGate] = []
    private var servers: [Server] = []
    /// A task that brings a receiver back; cancelled on teardown, so it cannot start one again.
    var outage: Task<Void, any Error>?

    private init(apple: RunningAppleSimulator) {
        self.apple = apple
    }

    /// Runs `body` with the receivers started (port 0: any) and `LEDGER_WEBHOOKS` naming them;
    /// an endpoint named in `gates` is that gate, forwarding to its receiver.
    static func with(
        conninfo: String, receivers: [(name: String, receiver: WebhookReceiver, port: Int)], gates: [String: WebhookChaosGate] = [:],
        _ body: (WebhookProcessRig) async throws -> Void
    ) async throws {
        let apple = try await AppleSimulatorServer(simulator: try AppleSimulator(configuration: AppleSimulator.Configuration(machineClock: .system))).start()
        let rig = WebhookProcessRig(apple: apple)
        do {
            try await rig.prepare(conninfo: conninfo, receivers: receivers, gates: gates)
            try await body(rig)
        } catch {
            await rig.tearDown(failed: true)
            throw error
        }
        await rig.tearDown(failed: false)
    }

    private func prepare(
        conninfo: String, receivers named: [(name: String, receiver: WebhookReceiver, port: Int)], gates gated: [String: WebhookChaosGate]
    ) async throws {
        var endpoints: [String] = []
        for entry in named {
            receivers.append(entry.receiver)
            try await entry.receiver.start(port: entry.port)
            var url = entry.receiver.url
            if let gate = gated[entry.name] {
                gates.append(gate)
                url = try await gate.start(forwardingTo: url)
            }
            endpoints.append("\(entry.name)=\(url.absoluteString)")
        }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let root = folder.appendingPathComponent("simulator-root.der")
        let catalog = folder.appendingPathComponent("catalog.json")
        try Data(apple.simulator.rootCertificateDER).write(to: root)
        try Data(LedgerHarness.catalog.utf8).write(to: catalog)
        environment = [
            "DATABASE_URL": conninfo, "APPLE_BUNDLE_ID": LedgerHarness.bundleId, "LEDGER_API_TOKENS": "\(LedgerHarness.appToken):app",
            "APPLE_VERIFY_RECEIPT_PRODUCTION_URL": apple.productionURL, "APPLE_VERIFY_RECEIPT_SANDBOX_URL": apple.sandboxURL,
            "APPLE_ROOT_CERTIFICATES": root.path, "LEDGER_CATALOG": catalog.path, "LOG_LEVEL": "warning",
            "LEDGER_WEBHOOKS": endpoints.joined(separator: ","),
            "LEDGER_WEBHOOK_SECRET": LedgerHarness.webhookSecret,
        ]
    }

    /// Starts `serve` on `port` with the rig's environment and `clients` clients of it, and
    /// waits until it is healthy.
    func startServer(port: Int, clients: Int = 1) async throws -> Server {
        let process = try LedgerProcess.start(["serve", "--address", "127.0.0.1:\(port)"], environment: environment)
        let server = Server(process: process, clients: (0..<max(1, clients)).map { _ in LedgerClient(port: port) }, port: port)
        servers.append(server)
        try await process.waitUntilHealthy(server.client)
        return server
    }

    func kill(_ process: LedgerProcess) async throws {
        process.send(SIGKILL)
        let killed = try await process.waitForExit(within: .seconds(30))
        #expect(killed == ProcessExit(status: SIGKILL, signaled: true))
    }

    /// SIGTERM, as an operator stops the server: it must exit 0.
    func stopGracefully(_ process: LedgerProcess) async throws {
        process.send(SIGTERM)
        let stopped = try await process.waitForExit(within: .seconds(30))
        #expect(stopped == ProcessExit(status: 0, signaled: false), "graceful shutdown:\n\(process.outputTail())")
    }

    private func tearDown(failed: Bool) async {
        outage?.cancel()
        _ = await outage?.result
        // Each client must be shut down on every path (AsyncHTTPClient traps in debug otherwise).
        for client in servers.flatMap({ $0.clients }) { await client.shutdown() }
        for server in servers where server.process.exit == nil { server.process.send(SIGKILL) }
        for server in servers { _ = try? await server.process.waitForExit(within: .seconds(10)) }
        if failed, !servers.isEmpty {
            Issue.record("server output:\n\(servers.map { $0.process.outputTail() }.joined(separator: "\n---\n"))")
        }
        for server in servers { server.process.removeOutput() }
        for gate in gates { await gate.stop() }
        for receiver in receivers { await receiver.stop() }
        try? await apple.stop()
        try? FileManager.default.removeItem(at: folder)
    }
}
