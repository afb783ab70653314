import ArgumentParser
import EventStore
import Foundation
import Logging
import Postgres

/// The newcomer's first run: migrate, append a few events of one purchase, print them and the
/// chain verification. Later issues grow it into a whole day of purchases over HTTP.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo", abstract: "Append sample events to the ledger, print them and verify the chain.")

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let logger = Logger(label: "purchase-ledger.demo")
        let outcome = try await database.withDatabase(logger: logger) { _, pool in
            try await Migrator().migrate(pool: pool, logger: logger)
            let store = EventStore(pool: pool, logger: logger)
            let appended = try await store.append(DemoEvents.onePurchase())
            print("appended \(appended.count) events:")
            print(DemoEvents.table(appended))
            return try await ChainVerifier(pool: pool).verify()
        }
        try printChainOutcome(outcome)
    }
}

/// One purchase's life as events: an order, the receipt, Apple's answer, the delivery.
enum DemoEvents {
    static func onePurchase() throws -> [StreamAppend] {
        let order = UUID().uuidString.lowercased()
        let transaction = String(1_000_000_000_000_000 + Int64.random(in: 0..<999_999_999))
        let user = "user-\(Int.random(in: 1...999))"
        return [
            StreamAppend(
                [try NewEvent(type: "OrderCreated", encoding: [
                    "order_id": order, "user_id": user, "product_id": "com.example.coins100", "quantity": "1",
                ])],
                to: "order-\(order)", expecting: .noStream),
            StreamAppend(
                [
                    try NewEvent(type: "ReceiptSubmitted", encoding: ["order_id": order, "transaction_id": transaction, "user_id": user]),
                    try NewEvent(type: "AppleResponded", encoding: ["endpoint": "production", "status": "0", "latency_ms": "212"]),
                    try NewEvent(type: "PurchaseDelivered", encoding: [
                        "transaction_id": transaction, "user_id": user, "product_id": "com.example.coins100", "coins": "100",
                    ]),
                ],
                to: "transaction-\(transaction)", expecting: .noStream),
        ]
    }

    static func table(_ events: [RecordedEvent]) -> String {
        var lines = ["position  stream                                         version  type"]
        for event in events {
            lines.append(
                "\(pad(String(event.position), 8))  \(pad(event.streamID, 45))  \(pad(String(event.streamVersion), 7))  \(event.type)")
            lines.append("          \(String(decoding: event.payload.bytes, as: UTF8.self))")
        }
        return lines.joined(separator: "\n")
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
