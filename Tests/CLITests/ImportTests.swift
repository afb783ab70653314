import Foundation
import Postgres
import TestSupport
import Testing

/// `import FILE` with a real Apple body (Tests/Fixtures/apple) and transaction records.
@Suite("purchase-ledger import")
struct ImportTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/apple/verifyreceipt-ios7-sandbox-multi-product-numeric-types-aporat.json")

    @Test("good lines go in through COPY, bad ones are reported by number with nothing kept, and a second run appends nothing")
    func importTwice() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("import-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let catalog = folder.appendingPathComponent("catalog.json")
        try Data(#"""
            {"products": [{"product_id": "myapp.1", "kind": "consumable", "grants": {"gems": 10}, "price_minor": 99, "currency": "USD"},
                          {"product_id": "myapp.2", "kind": "non_consumable", "price_minor": 199, "currency": "USD"}]}
            """#.utf8).write(to: catalog)
        let body = String(decoding: try Data(contentsOf: Self.fixture), as: UTF8.self).replacingOccurrences(of: "\n", with: " ")
        let lines = [
            #"{"user_id": "old-1", "verify_receipt_response": \#(body)}"#,
            #"{"user_id": "old-2", "transaction": {"transaction_id": "9000000001", "product_id": "myapp.1", "purchase_date_ms": 1700000000000, "quantity": 2, "price_milliunits": 1980, "currency": "USD"}}"#,
            #"{"user_id": "old-3", "transaction": {"transaction_id": "9000000002", "product_id": "myapp.1"}}"#,
            "not json",
            #"{"user_id": "old-4", "transaction": {"transaction_id": "9000000003", "product_id": "myapp.unknown", "purchase_date_ms": 1700000000000}}"#,
            #"{"user_id": "old-5", "transaction": {"transaction_id": "9000000004", "product_id": "myapp.1", "purchase_date_ms": true}}"#,
            // Line 2 again, byte for byte: the same line is imported once.
            #"{"user_id": "old-2", "transaction": {"transaction_id": "9000000001", "product_id": "myapp.1", "purchase_date_ms": 1700000000000, "quantity": 2, "price_milliunits": 1980, "currency": "USD"}}"#,
            "",
        ]
        let history = folder.appendingPathComponent("history.jsonl")
        try Data(lines.joined(separator: "\n").utf8).write(to: history)
        let environment = ["APPLE_BUNDLE_ID": "com.myapp"]

        try await TestDatabase.withSchema { conninfo, pool in
            #expect(try await ToolRun.run(["migrate"], databaseURL: conninfo).status == 0)
            #expect(try await ToolRun.run(["catalog", "load", catalog.path], databaseURL: conninfo, environment: environment).status == 0)
            let first = try await ToolRun.run(["import", history.path], databaseURL: conninfo, environment: environment)
            #expect(first.status == 1, "bad lines make the run fail: \(first.output)")
            #expect(first.output.contains("7 lines, 2 imported"), "\(first.output)")
            #expect(first.output.contains("1 already imported or blank, 4 bad"), "\(first.output)")
            #expect(first.output.contains("line 3: missing field transaction.purchase_date_ms"))
            #expect(first.output.contains("line 4: not valid JSON"))
            #expect(first.output.contains("line 5: unknown_product"))
            #expect(first.output.contains("line 6: transaction.purchase_date_ms is not an integer"))
            let users: [String] = try await pool.withConnection {
                try $0.query("SELECT DISTINCT payload->>'user_id' FROM events WHERE event_type = 'PurchaseDelivered' ORDER BY 1").map { try $0.decode(0) }
            }
            #expect(users == ["old-1", "old-2"], "nothing of a bad line is kept")
            let events: Int64 = try await pool.withConnection { try $0.query("SELECT count(*) FROM events")[0].decode(0) }

            let second = try await ToolRun.run(["import", history.path], databaseURL: conninfo, environment: environment)
            #expect(second.output.contains("0 imported (0 events)"), "\(second.output)")
            let after: Int64 = try await pool.withConnection { try $0.query("SELECT count(*) FROM events")[0].decode(0) }
            #expect(after == events, "a second run appends nothing")
            #expect(try await ToolRun.run(["verify"], databaseURL: conninfo).status == 0)

            // Imported history is revenue like any other, and balances include it.
            let audit = try await ToolRun.run(
                ["audit", "revenue", "--from", "2000-01-01", "--to", "2100-12-31", "--group-by", "product", "--format", "csv"], databaseURL: conninfo)
            #expect(audit.output.contains("myapp.1,USD,1,0,1.98,"), "Apple's 1.98 for two: \(audit.output)")
            let dispute = try await ToolRun.run(["dispute", "9000000001"], databaseURL: conninfo)
            #expect(dispute.output.contains("submitted an imported history line"), "\(dispute.output)")

            let missing = try await ToolRun.run(["import", history.path], databaseURL: conninfo, environment: ["APPLE_BUNDLE_ID": ""])
            #expect(missing.status == 2)
            #expect(missing.output.contains("APPLE_BUNDLE_ID is required"))
        }
    }
}
