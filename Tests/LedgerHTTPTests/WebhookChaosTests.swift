import AppleSimulator
import EventStore
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import LedgerWebhooks
import NIOHTTP1
import Postgres
import Spawning
import Synchronization
import TestSupport
import Testing

/// Webhooks delivered by `purchase-ledger serve` processes under trouble: a receiver that
/// refuses now and then and is unreachable for a while, a server killed with SIGKILL and
/// started again, two servers on one database. Serialized: both tests start server processes
/// and load a 2-core machine.
@Suite("Webhooks under chaos: refusals, an outage, a killed server, two servers", .serialized)
struct WebhookChaosTests {
    static let coins = "com.example.coins100"
    static let monthly = "com.example.pro.monthly"

    @Test(
        "a flaky, then unreachable receiver, two endpoints, 8 clients and a SIGKILL: every message reaches both, once each after deduplication, in each user's log order, every signature valid",
        .timeLimit(.minutes(8)))
    func chaos() async throws {
        try await TestDatabase.withSchema { conninfo, pool in
            _ = try await Migrator().migrate(pool: pool, logger: TestDatabase.logger)
            let answers = FlakyAnswers()
            let flaky = WebhookReceiver(signer: try WebhookFlowTests.signer()) { answers.answer($0) }
            let steady = WebhookReceiver(signer: try WebhookFlowTests.signer()) { _ in 204 }
            // flaky goes down and comes back on its port: one of the tests' own range, which the
            // kernel hands to no outgoing connection meanwhile (see LoopbackPort).
            let flakyPort = try LoopbackPort.freeOutsideEphemeralRange()
            let receivers = ["flaky": flaky, "steady": steady]
            try await WebhookProcessRig.with(
                conninfo: conninfo, receivers: [("flaky", flaky, flakyPort), ("steady", steady, 0)]
            ) { rig in
                let port = try LoopbackPort.freeOutsideEphemeralRange()
                let first = try await rig.startServer(port: port)
                let simulator = rig.apple.simulator
                simulator.notificationURL = "http://127.0.0.1:\(port)/v1/notifications/apple"
                let wallets = CoinWallets()

                try await Self.operate(0..<60, client: first.client, simulator: simulator, pool: pool, wallets: wallets)
                // Renews the subscriptions bought so far.
                _ = try await simulator.advance(days: 32)

                // flaky unreachable for 20 s while operations, the kill and the restart go on.
                await flaky.goDown()
                rig.outage = Task {
                    try await Task.sleep(for: .seconds(20))
                    try await flaky.comeBack()
                }
                try await Self.operate(60..<110, client: first.client, simulator: simulator, pool: pool, wallets: wallets)

                // Killed right after a burst of writes: their messages are being sent, flaky's wait.
                let projected = try await Self.projectedIds(pool)
                let waiting = Self.missing(projected, from: receivers)
                #expect(!waiting.isEmpty, "every message was acknowledged before the kill: nothing was in flight")
                try await rig.kill(first.process)
                let second = try await rig.startServer(port: port)

                try await Self.operate(110..<160, client: second.client, simulator: simulator, pool: pool, wallets: wallets)
                _ = try await simulator.advance(days: 32)
                try await Self.operate(160..<200, client: second.client, simulator: simulator, pool: pool, wallets: wallets)
                if let outage = rig.outage { try await outage.value }

                // Retries back off: after 20 s of refusals the next attempt may be a minute away.
                let expected = try await Self.everyMessage(acknowledgedBy: receivers, pool: pool, within: .seconds(240))
                for (name, receiver) in receivers.sorted(by: { $0.key < $1.key }) {
                    try await Self.expectExactlyTheLog(receiver, name: name, expected: expected, pool: pool)
                }
                #expect(flaky.arrivals.contains { $0.status == 500 }, "flaky never refused")
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
            _ = try await Migrator().migrate(pool: pool, logger: TestDatabase.logger)
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
                // The receiver acknowledges every request: a second arrival would mean both servers sent it.
                let byId = Dictionary(grouping: backend.arrivals) { $0.id }
                #expect(Set(byId.keys) == expected)
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
                #expect(all.isSuperset(of: expected))
                #expect(all.count > expected.count, "the purchases after the kill made no message")
                #expect(backend.arrivals.allSatisfy { $0.signatureValid })

                try await rig.stopGracefully(survivor.process)
            }
        }
    }

    // MARK: - Operations

    /// Runs the operations `range` from 8 concurrent clients. Operation `index` belongs to client
    /// `index % 8`, and so does its user (40 users in all): each user's operations run one after
    /// another, so `wallets` knows the balance a spend may take.
    static func operate(
        _ range: Range<Int>, client: LedgerClient, simulator: AppleSimulator, pool: ConnectionPool, wallets: CoinWallets
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<8 {
                group.addTask {
                    for index in range where index % 8 == lane {
                        try await Self.perform(index, client: client, simulator: simulator, pool: pool, wallets: wallets)
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    static func owner(of index: Int) -> String {
        "chaos-user-\(index % 8 + 8 * ((index / 8) % 5))"
    }

    /// One operation, drawn from the simulator's SplitMix64 seeded with its index (a run can be
    /// made again):
    /// half coin purchases, a tenth subscriptions, a quarter spends, the rest refunds; a spend
    /// the user cannot pay for, or a refund of nothing, buys coins instead.
    static func perform(_ index: Int, client: LedgerClient, simulator: AppleSimulator, pool: ConnectionPool, wallets: CoinWallets) async throws {
        var generator = SeededGenerator(seed: UInt64(index))
        let user = Self.owner(of: index)
        let wallet = wallets.wallet(user)
        switch Int.random(in: 0..<20, using: &generator) {
        case 10..<12:
            _ = try await buy(monthly, index: index, user: user, client: client, simulator: simulator)
        case 12..<17 where wallet.coins >= 10:
            let amount = min(wallet.coins, Int.random(in: 10...60, using: &generator))
            try await spend(amount, index: index, user: user, client: client)
            wallets.update(user) { $0.coins -= amount }
        case 17..<20 where !wallet.refundable.isEmpty:
            let transactionId = wallet.refundable[Int.random(in: 0..<wallet.refundable.count, using: &generator)]
            try await refund(transactionId, simulator: simulator, pool: pool)
            wallets.update(user) { entry in
                entry.coins -= 100
                entry.refundable.removeAll { $0 == transactionId }
            }
        default:
            let purchase = try await buy(coins, index: index, user: user, client: client, simulator: simulator)
            wallets.update(user) { entry in
                entry.coins += 100
                entry.refundable.append(purchase.transactionId)
            }
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
            appleId: "chaos-apple-\(index)", productId: product, environment: .production, appAccountToken: UUID(uuidString: token))
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

    /// Asserts what one receiver acknowledged against the log: exactly the projection's
    /// messages, every arrival signed and one of them, each user's in log order, and as many
    /// deliveries and refunds as the log holds.
    static func expectExactlyTheLog(_ receiver: WebhookReceiver, name: String, expected: Set<String>, pool: ConnectionPool) async throws {
        let told = receiver.acknowledged
        let ids = Set(told.map { $0.id })
        #expect(ids == expected, "\(name): \(ids.subtracting(expected).count) extra, \(expected.subtracting(ids).count) missing")
        #expect(Set(receiver.arrivals.map { $0.id }).isSubset(of: expected), "\(name) got a message the log does not hold")
        #expect(receiver.arrivals.allSatisfy { $0.signatureValid }, "\(name) got an unsigned or badly signed message")

        // The first acknowledgement of each message, per user, follows log order.
        var byUser: [String: [(Int, Int)]] = [:]
        for arrival in told {
            byUser[arrival.data["user_id"] as? String ?? "", default: []].append(WebhookFlowTests.order(arrival.id))
        }
        for (user, order) in byUser.sorted(by: { $0.key < $1.key }) {
            #expect(zip(order, order.dropFirst()).allSatisfy { $0 < $1 }, "\(name): \(user)'s messages out of log order: \(order)")
        }

        let delivered = try await eventCount("PurchaseDelivered", pool)
        let refunded = try await eventCount("PurchaseRefunded", pool)
        #expect(Int64(told.filter { $0.type == "purchase.delivered" }.count) == delivered, "\(name): purchase.delivered")
        #expect(Int64(told.filter { $0.type == "purchase.refunded" }.count) == refunded, "\(name): purchase.refunded")
        let types = Set(told.map { $0.type })
        for kind in ["purchase.delivered", "balance.changed", "purchase.refunded", "subscription.renewed"] {
            #expect(types.contains(kind), "\(name) got no \(kind)")
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
            let rows = try connection.query("SELECT position, sequence FROM projection_webhook_events")
            let ids = try rows.map { row in
                let position = try row.decode(0, as: Int64.self)
                let sequence = try row.decode(1, as: Int32.self)
                return "evt_\(position)_\(sequence)"
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

    static func eventCount(_ type: String, _ pool: ConnectionPool) async throws -> Int64 {
        try await pool.withConnection { try $0.query("SELECT count(*) FROM events WHERE event_type = \(type)")[0].decode(0, as: Int64.self) }
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

/// The flaky receiver's answers: 500 to about a third of the messages, at random, once each.
/// Once only: the back-off doubles with every failure, and a message refused through the
/// outage and then again repeatedly could wait longer than the test may run.
final class FlakyAnswers: Sendable {
    private let refused = Mutex<Set<String>>([])

    func answer(_ id: String) -> Int {
        refused.withLock { refused in
            guard !refused.contains(id), Int.random(in: 0..<3) == 0 else { return 204 }
            refused.insert(id)
            return 500
        }
    }
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
/// the catalog, webhook receivers, `serve` processes and their clients, and an outage task.
/// `with` stops all of it on every path; when the body fails, servers still running are killed
/// and their output is reported.
final class WebhookProcessRig {
    struct Server {
        let process: LedgerProcess
        let client: LedgerClient
        let port: Int
    }

    let apple: RunningAppleSimulator
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pl-webhook-chaos-\(UUID().uuidString)")
    private(set) var environment: [String: String] = [:]
    private var receivers: [WebhookReceiver] = []
    private var servers: [Server] = []
    /// A task that brings a receiver back; cancelled on teardown, so it cannot start one again.
    var outage: Task<Void, any Error>?

    private init(apple: RunningAppleSimulator) {
        self.apple = apple
    }

    /// Runs `body` with the receivers started (port 0: any) and `LEDGER_WEBHOOKS` naming them.
    static func with(
        conninfo: String, receivers: [(name: String, receiver: WebhookReceiver, port: Int)], _ body: (WebhookProcessRig) async throws -> Void
    ) async throws {
        let apple = try await AppleSimulatorServer(simulator: try AppleSimulator(configuration: AppleSimulator.Configuration())).start()
        let rig = WebhookProcessRig(apple: apple)
        do {
            try await rig.prepare(conninfo: conninfo, receivers: receivers)
            try await body(rig)
        } catch {
            await rig.tearDown(failed: true)
            throw error
        }
        await rig.tearDown(failed: false)
    }

    private func prepare(conninfo: String, receivers named: [(name: String, receiver: WebhookReceiver, port: Int)]) async throws {
        for entry in named {
            receivers.append(entry.receiver)
            try await entry.receiver.start(port: entry.port)
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
            "LEDGER_WEBHOOKS": named.map { "\($0.name)=\($0.receiver.url.absoluteString)" }.joined(separator: ","),
            "LEDGER_WEBHOOK_SECRET": LedgerHarness.webhookSecret,
        ]
    }

    /// Starts `serve` on `port` with the rig's environment and waits until it is healthy.
    func startServer(port: Int) async throws -> Server {
        let process = try LedgerProcess.start(["serve", "--address", "127.0.0.1:\(port)"], environment: environment)
        let server = Server(process: process, client: LedgerClient(port: port), port: port)
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
        for server in servers { await server.client.shutdown() }
        for server in servers where server.process.exit == nil { server.process.send(SIGKILL) }
        for server in servers { _ = try? await server.process.waitForExit(within: .seconds(10)) }
        if failed, !servers.isEmpty {
            Issue.record("server output:\n\(servers.map { $0.process.outputTail() }.joined(separator: "\n---\n"))")
        }
        for server in servers { server.process.removeOutput() }
        for receiver in receivers { await receiver.stop() }
        try? await apple.stop()
        try? FileManager.default.removeItem(at: folder)
    }
}
