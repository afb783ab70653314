import AppStore
import AppleSimulator
import Foundation
import Primitives
import Testing

@Suite("StoreKit 2 signed transactions")
struct SignedTransactionTests {
    @Test("the JWS carries an x5c chain of three and Apple's payload fields")
    func payload() async throws {
        let simulator = try AppleSimulator(configuration: SimulatorHarness.configuration())
        let token = UUID()
        let purchase = try await simulator.purchase(
            appleId: "j", productId: "com.example.coins100", environment: .production, quantity: 2,
            appAccountToken: token)
        let parts = purchase.signedTransaction.split(separator: ".")
        #expect(parts.count == 3)
        let header = try #require(
            try JSONSerialization.jsonObject(with: Base64URL.decode(parts[0]) ?? Data()) as? [String: Any])
        #expect(header["alg"] as? String == "ES256")
        let chain = try #require(header["x5c"] as? [String])
        #expect(chain.count == 3)
        #expect(Data(base64Encoded: chain[2]) == Data(simulator.rootCertificateDER))
        let payload = try jwsPayload(purchase.signedTransaction)
        #expect(payload["transactionId"] as? String == purchase.transactionId)
        #expect(payload["originalTransactionId"] as? String == purchase.transactionId)
        #expect(payload["bundleId"] as? String == "com.example.app")
        #expect(payload["productId"] as? String == "com.example.coins100")
        #expect(payload["type"] as? String == "Consumable")
        #expect(payload["quantity"] as? Int == 2)
        #expect(int64(payload["price"]) == 1980)
        #expect(payload["currency"] as? String == "USD")
        #expect(payload["environment"] as? String == "Production")
        #expect(payload["appAccountToken"] as? String == token.uuidString.lowercased())
        #expect(int64(payload["purchaseDate"]) == SimulatorHarness.startMs)
        #expect(int64(payload["signedDate"]) == SimulatorHarness.startMs)
        #expect(payload["inAppOwnershipType"] as? String == "PURCHASED")
    }

    @Test("a purchase through the control API returns receipt-data and the signed transaction")
    func controlPurchase() async throws {
        try await SimulatorHarness.withServer { running in
            let reply = try await RawHTTP.post(
                "\(running.baseURL)/control/purchases",
                json: ["apple_id": "http", "product_id": "com.example.pro.monthly", "environment": "Production"])
            #expect(reply.status == 201)
            let json = try #require(reply.json)
            let id = try #require(json["transaction_id"] as? String)
            #expect(json["is_trial_period"] as? Bool == true)
            #expect(try jwsPayload(try #require(json["signed_transaction"] as? String))["transactionId"] as? String == id)
            let verify = try await RawHTTP.verify(running.productionURL, receipt: try #require(json["receipt_data"] as? String))
            #expect(verify.json?["status"] as? Int == 0)
            #expect(try await RawHTTP.post("\(running.baseURL)/control/clock/advance", json: ["days": 8]).status == 200)
            let clock = try await RawHTTP.get("\(running.baseURL)/control/clock").json
            #expect(int64(clock?["now_ms"]) == SimulatorHarness.startMs + 8 * SimulatorHarness.dayMs)
            let unknown = try await RawHTTP.post(
                "\(running.baseURL)/control/purchases", json: ["apple_id": "http", "product_id": "nope"])
            #expect(unknown.status == 404)
            #expect((unknown.json?["error"] as? [String: Any])?["code"] as? String == "unknown_product")
            let certificate = try await RawHTTP.get("\(running.baseURL)/control/root-certificate")
            #expect(certificate.body == Data(running.simulator.rootCertificateDER))
        }
    }
}
