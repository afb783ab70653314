import AppleSimulator
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PurchaseLedgerCLI
import Synchronization

/// The demo's purchases, through the HTTP API exactly as an app's backend would send them (the
/// game's backend, its token limited to the game; the puzzle's in `playSecondApp`):
/// orders, receipts, a StoreKit 2 transaction, a resubmission, a sandbox receipt, a subscription
/// that renews, a refund, and an Apple outage the retry worker rides out.
struct DemoScript {
    static let bundleId = "com.example.app"
    static let appToken = "demo-app-token"
    static let financeToken = "demo-finance-token"
    static let supportToken = "demo-support-token"
    /// The demo's products, with App Store Connect's ids (the simulator's), so the ledger reads
    /// their price points.
    static var catalog: String {
        func appleId(_ product: String) -> String {
            SimulatedProduct.defaultCatalog.first { $0.productId == product }?.reportAppleIdentifier ?? ""
        }
        return """
            {"products": [
              {"product_id": "com.example.coins100", "kind": "consumable", "grants": {"coins": 100}, "price_minor": 99, "currency": "USD", "apple_id": "\(appleId("com.example.coins100"))"},
              {"product_id": "com.example.removeads", "kind": "non_consumable", "price_minor": 299, "currency": "USD", "apple_id": "\(appleId("com.example.removeads"))"},
              {"product_id": "com.example.pro.monthly", "kind": "auto_renewable", "price_minor": 499, "currency": "USD", "apple_id": "\(appleId("com.example.pro.monthly"))"},
              {"product_id": "com.example.pro.yearly", "kind": "auto_renewable", "price_minor": 4999, "currency": "USD", "apple_id": "\(appleId("com.example.pro.yearly"))"}
            ]}
            """
    }

    let ledger: String
    let simulator: AppleSimulator
    let positions = DemoPositions()
    /// Called with true as the crowd's days begin and false when they end: the demo's webhook
    /// receiver is down meanwhile, and catches up after.
    var receiverDown: @Sendable (Bool) async throws -> Void = { _ in }

    /// Plays the day; returns the refunded transaction, whose dispute timeline the demo prints.
    func play() async throws -> String {
        print("purchases through \(ledger):")
        // Consumables for three users, one of them twice, and one resubmitted by a retrying client.
        for (user, apple) in [("alice", "apple-alice"), ("bob", "apple-bob"), ("carol", "apple-carol"), ("alice", "apple-alice")] {
            let purchase = try await buy(user: user, apple: apple, product: "com.example.coins100")
            try await report(user, "coins100 receipt", try await submitReceipt(user: user, purchase))
        }
        let bobCoins = try await buy(user: "bob", apple: "apple-bob", product: "com.example.coins100")
        try await report("bob", "coins100 receipt", try await submitReceipt(user: "bob", bobCoins))
        try await report("bob", "same receipt again", try await submitReceipt(user: "bob", bobCoins))
        // A non-consumable through StoreKit 2's signed transaction, verified without Apple.
        let ads = try await buy(user: "carol", apple: "apple-carol", product: "com.example.removeads")
        try await report("carol", "removeads StoreKit 2", try await post("/v1/transactions", ["user_id": "carol", "signed_transaction": ads.signedTransaction]))
        // A sandbox receipt: production answers 21007, the ledger asks sandbox.
        let sandbox = try await buy(user: "dave", apple: "apple-dave", product: "com.example.coins100", environment: .sandbox)
        try await report("dave", "sandbox coins100", try await submitReceipt(user: "dave", sandbox))
        // Apple is down: the receipt is kept, the client hears pending, the worker delivers it.
        simulator.injectFailure(FailureRule(.status(21005), .next(1)))
        let outage = try await buy(user: "erin", apple: "apple-erin", product: "com.example.coins100")
        try await report("erin", "coins100 during outage", try await submitReceipt(user: "erin", outage))
        // A subscription with a trial that renews a month later, and a refund of one purchase.
        let monthly = try await buy(user: "alice", apple: "apple-alice", product: "com.example.pro.monthly")
        try await report("alice", "pro.monthly receipt", try await submitReceipt(user: "alice", monthly))
        _ = try await simulator.advance(days: 10)
        _ = try await simulator.refund(transactionId: bobCoins.transactionId)
        print("  (simulated clock +10 days: alice's trial renews; Apple refunds one of bob's packs)")
        try await waitUntil("erin's pending receipt is delivered") {
            let erin = try await get("/v1/users/erin")
            return ((erin["balances"] as? [String: Any])?["coins"] as? Int) == 100
        }
        let ivanOriginal = try await playStories(carolApple: "apple-carol", aliceMonthly: monthly)
        try await receiverDown(true)
        try await playCrowd(users: 300, days: 5)
        try await receiverDown(false)
        print("\nbalances and entitlements (GET /v1/users/ID):")
        for user in ["alice", "bob", "carol", "dave", "erin", "gina", "hank"] {
            let view = try await get("/v1/users/\(user)")
            let balances = (view["balances"] as? [String: Any]).map { $0.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ") } ?? ""
            let owned = (view["entitlements"] as? [[String: Any]] ?? []).map {
                "\($0["product_id"] as? String ?? "?")\(($0["active"] as? Bool) == true ? "" : " (inactive)")"
            }
            print("  \(pad(user, 6)) \(pad(balances.isEmpty ? "-" : balances, 12)) \(owned.joined(separator: ", "))")
        }
        print("\nsubscriptions (GET /v1/subscriptions/ID):")
        for original in [monthly.transaction.originalTransactionId, ivanOriginal] {
            let sub = try await get("/v1/subscriptions/\(original)")
            print("  \(sub["original_transaction_id"] ?? "?") \(sub["product_id"] ?? "?") owner=\(sub["owner_user_id"] ?? "?") "
                + "status=\(sub["status"] ?? "?") expires=\(sub["expires_at"] ?? "?") in_trial=\((sub["in_trial"] as? Bool).map(String.init) ?? "?")")
        }
        print("")
        return bobCoins.transactionId
    }

    func buy(user: String, apple: String, product: String, environment: SimulatedEnvironment = .production) async throws -> PurchaseResult {
        let order = try await post("/v1/orders", ["user_id": user, "product_id": product])
        let token = (order.json["app_account_token"] as? String).flatMap(UUID.init(uuidString:))
        return try await simulator.purchase(appleId: apple, productId: product, environment: environment, appAccountToken: token)
    }

    func submitReceipt(user: String, _ purchase: PurchaseResult) async throws -> (status: Int, json: [String: Any]) {
        try await post("/v1/receipts", ["user_id": user, "receipt_data": purchase.receiptData, "transaction_id": purchase.transactionId])
    }

    func report(_ user: String, _ what: String, _ answer: (status: Int, json: [String: Any])) async throws {
        var outcome = answer.json["outcome"] as? String ?? "?"
        if let error = answer.json["error"] as? [String: Any], let code = error["code"] { outcome += " \(code)" }
        print("  \(pad(user, 6)) \(pad(what, 24)) → \(answer.status) \(outcome)")
        guard answer.status < 500 else { throw DemoError("the ledger answered \(answer.status) to \(what)") }
    }

    func waitUntil(_ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw DemoError("timed out waiting until \(what)")
    }

    /// `token`: the game's backend's unless another is given (the puzzle's).
    func post(_ path: String, _ body: [String: Any], token: String = Self.appToken) async throws -> (status: Int, json: [String: Any]) {
        try await send(.POST, path, JSONSerialization.data(withJSONObject: body), token: token)
    }

    /// A read of the head (what Apple's notifications and the workers recorded included), or,
    /// `afterOwnWrite`, a read that waits only for the last position the demo's own calls were
    /// answered with (`X-Ledger-After`).
    func get(_ path: String, afterOwnWrite: Bool = false, token: String = Self.appToken) async throws -> [String: Any] {
        try await send(.GET, path, nil, after: afterOwnWrite ? positions.last : nil, token: token).json
    }

    /// A read of the head, with its status (the feed's 409 is an answer, not a failure).
    func read(_ path: String) async throws -> (status: Int, json: [String: Any]) {
        try await send(.GET, path, nil)
    }

    private func send(
        _ method: HTTPMethod, _ path: String, _ body: Data?, after: Int64? = nil, token: String = Self.appToken
    ) async throws -> (status: Int, json: [String: Any]) {
        var request = HTTPClientRequest(url: ledger + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let after { request.headers.add(name: "X-Ledger-After", value: String(after)) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        if let position = response.headers.first(name: "X-Ledger-Position").flatMap({ Int64($0) }) { positions.note(position) }
        let bytes = try await response.body.collect(upTo: 4 << 20)
        let json = (try? JSONSerialization.jsonObject(with: Data(buffer: bytes))) as? [String: Any] ?? [:]
        return (Int(response.status.code), json)
    }

    func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}

/// The highest `X-Ledger-Position` the demo's own calls were answered with.
final class DemoPositions: Sendable {
    private let highest = Mutex<Int64?>(nil)
    var last: Int64? { highest.withLock { $0 } }
    func note(_ position: Int64) { highest.withLock { $0 = max($0 ?? position, position) } }
}

struct DemoError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
