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

            let status1 = try await RawHTTP.verify(running.productionURL, receipt: sandbox.receiptData).json?["status"] as? Int

            #expect(status1 == 21007)
            let status2 = try await RawHTTP.verify(running.sandboxURL, receipt: production.receiptData).json?["status"] as? Int
            #expect(status2 == 21008)
            let status3 = try await RawHTTP.verify(running.sandboxURL, receipt: sandbox.receiptData).json?["status"] as? Int
            #expect(status3 == 0)
            let status4 = try await RawHTTP.verify(running.productionURL, receipt: production.receiptData).json?["status"] as? Int
            #expect(status4 == 0)
            #expect(running.simulator.verifyReceiptCalls == [.production: 2, .sandbox: 2])
        }
    }

    @Test("a wrong shared secret answers 21004 when one is configured")
    func wrongSecret() async throws {
        try await SimulatorHarness.withServer(SimulatorHarness.configuration(sharedSecret: "s3cret")) { running in
            let purchase = try await running.simulator.purchase(appleId: "a", productId: "com.example.pro.monthly")
            let status5 = try await RawHTTP.verify(running.sandboxURL, receipt: purchase.receiptData, password: "nope").json?["status"] as? Int
            #expect(status5 == 21004)
            let status6 = try await RawHTTP.verify(running.sandboxURL, receipt: purchase.receiptData).json?["status"] as? Int
            #expect(status6 == 21004)
            let status7 = try await RawHTTP.verify(running.sandboxURL, receipt: purchase.receiptData, password: "s3cret").json?["status"] as? Int
            #expect(status7 == 0)
        }
    }

    @Test("unreadable requests answer 21000, 21002 and 21003 as Apple does")
    func garbage() async throws {
        try await SimulatorHarness.withServer { running in
            let status8 = try await RawHTTP.post(running.productionURL, body: Data("not json".utf8)).json?["status"] as? Int
            #expect(status8 == 21000)
            let status9 = try await RawHTTP.post(running.productionURL, json: ["password": "x"]).json?["status"] as? Int
            #expect(status9 == 21002)
            let status10 = try await RawHTTP.verify(running.productionURL, receipt: "%%% not base64 %%%").json?["status"] as? Int
            #expect(status10 == 21002)
            let forged = Data("PLSIM1.production.1.00ff".utf8).base64EncodedString()
            let status11 = try await RawHTTP.verify(running.productionURL, receipt: forged).json?["status"] as? Int
            #expect(status11 == 21003)
            let foreign = Data((0..<64).map { UInt8($0) }).base64EncodedString()
            let status12 = try await RawHTTP.verify(running.productionURL, receipt: foreign).json?["status"] as? Int
            #expect(status12 == 21003)
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
