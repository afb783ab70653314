import AppleSimulator
import Foundation
import Testing

@Suite("verifyReceipt answers with Apple's statuses")
struct VerifyReceiptRoutingTests {
    @Test("a sandbox receipt sent to production answers 21007, and the reverse 21008")
    func wrongEnvironment() async throws {
        try await SimulatorHarness.withServer { running in
            let sandbox = try await running.simulator.purchase(appleId: "tester", productId: "com.example.removeads")
            let production = try await running.simulator.purchase(
                appleId: "customer", productId: "com.example.removeads", environment: .production)

            #expect(try await RawHTTP.verifyStatus(running.productionURL, receipt: sandbox.receiptData) == 21007)
            #expect(try await RawHTTP.verifyStatus(running.sandboxURL, receipt: production.receiptData) == 21008)
            #expect(try await RawHTTP.verifyStatus(running.sandboxURL, receipt: sandbox.receiptData) == 0)
            #expect(try await RawHTTP.verifyStatus(running.productionURL, receipt: production.receiptData) == 0)
            #expect(running.simulator.verifyReceiptCalls == [.production: 2, .sandbox: 2])
        }
    }

    @Test("a wrong shared secret answers 21004 when one is configured")
    func wrongSecret() async throws {
        try await SimulatorHarness.withServer(SimulatorHarness.configuration(sharedSecret: "s3cret")) { running in
            let purchase = try await running.simulator.purchase(appleId: "a", productId: "com.example.pro.monthly")
            #expect(try await RawHTTP.verifyStatus(running.sandboxURL, receipt: purchase.receiptData, password: "nope") == 21004)
            #expect(try await RawHTTP.verifyStatus(running.sandboxURL, receipt: purchase.receiptData) == 21004)
            #expect(try await RawHTTP.verifyStatus(running.sandboxURL, receipt: purchase.receiptData, password: "s3cret") == 0)
        }
    }

    @Test("unreadable requests answer 21000, 21002 and 21003 as Apple does")
    func garbage() async throws {
        try await SimulatorHarness.withServer { running in
            let notJSON = try await RawHTTP.post(running.productionURL, body: Data("not json".utf8)).json?["status"] as? Int
            #expect(notJSON == 21000)
            let noReceipt = try await RawHTTP.post(running.productionURL, json: ["password": "x"]).json?["status"] as? Int
            #expect(noReceipt == 21002)
            #expect(try await RawHTTP.verifyStatus(running.productionURL, receipt: "%%% not base64 %%%") == 21002)
            let forged = Data("PLSIM1.production.1.00ff".utf8).base64EncodedString()
            #expect(try await RawHTTP.verifyStatus(running.productionURL, receipt: forged) == 21003)
            let foreign = Data((0..<64).map { UInt8($0) }).base64EncodedString()
            #expect(try await RawHTTP.verifyStatus(running.productionURL, receipt: foreign) == 21003)
        }
    }

    @Test("a valid answer sends every scalar as a string, as Apple does")
    func stringScalars() async throws {
        try await SimulatorHarness.withServer { running in
            let purchase = try await running.simulator.purchase(appleId: "a", productId: "com.example.coins100", quantity: 3)
            let reply = try await RawHTTP.verify(running.sandboxURL, receipt: purchase.receiptData)
            let json = try #require(reply.json)
            #expect(json["status"] as? Int == 0)
            #expect(json["environment"] as? String == "Sandbox")
            let receipt = try #require(json["receipt"] as? [String: Any])
            #expect(receipt["bundle_id"] as? String == "com.example.app")
            #expect(receipt["receipt_type"] as? String == "ProductionSandbox")
            let item = try #require((receipt["in_app"] as? [[String: Any]])?.first)
            #expect(item["transaction_id"] as? String == purchase.transactionId)
            #expect(item["original_transaction_id"] as? String == purchase.transactionId)
            #expect(item["quantity"] as? String == "3")
            #expect(item["purchase_date_ms"] as? String == String(SimulatorHarness.startMs))
            #expect(item["purchase_date"] as? String == "2025-01-01 00:00:00 Etc/GMT")
            #expect(item["purchase_date_pst"] as? String == "2024-12-31 16:00:00 America/Los_Angeles")
            #expect(item["is_trial_period"] as? String == "false")
            // No subscription in this receipt: Apple leaves these out.
            #expect(json["latest_receipt_info"] == nil)
            #expect(json["pending_renewal_info"] == nil)
        }
    }
}
