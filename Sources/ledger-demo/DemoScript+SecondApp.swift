import AppleSimulator
import Foundation

extension DemoScript {
    /// The ledger's second app: a puzzle game of the same developer account, whose coin pack
    /// has the game's product id (another product: 300 coins, its own Apple ID).
    static let puzzleBundleId = "com.example.puzzle"
    /// The puzzle's backend's token, limited to the puzzle (`token:app@BUNDLE_ID`).
    static let puzzleToken = "demo-puzzle-token"

    static var puzzleCatalog: String {
        let product = SimulatedProduct.defaultCatalog.first { $0.productId == "com.example.coins100" }
        let appleId = product?.reportAppleIdentifier(inApp: puzzleBundleId, primaryApp: bundleId) ?? ""
        return """
            {"products": [
              {"product_id": "com.example.coins100", "kind": "consumable", "grants": {"coins": 300}, "price_minor": 99, "currency": "USD", "apple_id": "\(appleId)"}
            ]}
            """
    }

    /// Alice buys the puzzle's coin pack through the puzzle's backend: the same product id as
    /// the game's, its own grant; each backend sees its own app; a game purchase sent with the
    /// puzzle's token is refused.
    func playSecondApp() async throws {
        print("\na second app in the same ledger, \(Self.puzzleBundleId) (its backend's token is limited to it):")
        let order = try await post("/v1/orders", ["user_id": "alice", "product_id": "com.example.coins100"], token: Self.puzzleToken)
        let token = (order.json["app_account_token"] as? String).flatMap(UUID.init(uuidString:))
        let puzzle = try await simulator.purchase(
            appleId: "apple-alice-puzzle", productId: "com.example.coins100", environment: .production, appAccountToken: token,
            bundleId: Self.puzzleBundleId)
        try await report("alice", "puzzle coins100 receipt", try await post(
            "/v1/receipts", ["user_id": "alice", "receipt_data": puzzle.receiptData, "transaction_id": puzzle.transactionId], token: Self.puzzleToken))
        func coins(_ view: [String: Any]) -> Any { (view["balances"] as? [String: Any])?["coins"] ?? "-" }
        let inGame = coins(try await get("/v1/users/alice"))
        let inPuzzle = coins(try await get("/v1/users/alice", token: Self.puzzleToken))
        print("  alice  coins (GET /v1/users)     → \(inGame) in the game, \(inPuzzle) in the puzzle, each backend seeing its own")
        let game = try await buy(user: "alice", apple: "apple-alice", product: "com.example.coins100")
        let foreign = try await post(
            "/v1/receipts", ["user_id": "alice", "receipt_data": game.receiptData, "transaction_id": game.transactionId], token: Self.puzzleToken)
        try await report("alice", "game pack, puzzle token", foreign)
        guard foreign.status == 422 else { throw DemoError("the puzzle's token was not refused the game's receipt: \(foreign.status)") }
        try await report("alice", "game pack, game token", try await submitReceipt(user: "alice", game))
    }
}
