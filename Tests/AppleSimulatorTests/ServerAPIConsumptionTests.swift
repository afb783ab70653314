import AppleSimulator
import Foundation
import Testing

@Suite("Send Consumption Information is checked and recorded")
struct ServerAPIConsumptionTests {
    @Test("an accepted call answers 202 with no body and is recorded byte for byte")
    func recorded() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let simulator = running.simulator
            let purchase = try await simulator.purchase(appleId: "c", productId: "com.example.coins100")
            try await simulator.requestConsumption(transactionId: purchase.transactionId)
            let body = Data(
                #"{"customerConsented":true,"consumptionPercentage":25000,"deliveryStatus":"DELIVERED","refundPreference":"GRANT_PRORATED","sampleContentProvided":false}"#
                    .utf8)
            let reply = try await ServerAPIHTTP.call(
                .put, "\(running.serverAPIURL)/inApps/v2/transactions/consumption/\(purchase.transactionId)",
                token: try await key.token(), body: body)
            #expect(reply.status == 202)
            #expect(reply.body.isEmpty)

            let recorded = try #require(simulator.consumptionRequests.first)
            #expect(simulator.consumptionRequests.count == 1)
            #expect(recorded.transactionId == purchase.transactionId)
            #expect(recorded.rawBody == body)
            #expect(
                recorded.information
                    == ConsumptionInformation(
                        customerConsented: true, consumptionPercentage: 25_000, deliveryStatus: .delivered,
                        refundPreference: .grantProrated, sampleContentProvided: false))
            #expect(recorded.simulatedNowMs == SimulatorHarness.startMs)

            let listed = try await RawHTTP.get("\(running.baseURL)/control/server-api/consumption-requests")
            let first = try #require((try JSONSerialization.jsonObject(with: listed.body) as? [[String: Any]])?.first)
            #expect(first["transaction_id"] as? String == purchase.transactionId)
            #expect(first["raw_body"] as? String == String(decoding: body, as: UTF8.self))
        }
    }

    /// Bodies Apple refuses, with the error code it answers.
    static let refusedBodies: [(body: String, code: Int64)] = [
        (#"{"customerConsented":false,"deliveryStatus":"DELIVERED","sampleContentProvided":false}"#, 4_000_035),
        (#"{"deliveryStatus":"DELIVERED","sampleContentProvided":false}"#, 4_000_035),
        (#"{"customerConsented":true,"deliveryStatus":"LOST_IN_THE_MAIL","sampleContentProvided":false}"#, 4_000_036),
        (#"{"customerConsented":true,"deliveryStatus":"DELIVERED"}"#, 4_000_041),
        (#"{"customerConsented":true,"consumptionPercentage":100001,"deliveryStatus":"DELIVERED","sampleContentProvided":true}"#, 4_000_000),
        (#"{"customerConsented":true,"deliveryStatus":"DELIVERED","refundPreference":"GRANT_PRORATED","sampleContentProvided":true}"#, 4_000_000),
        ("not json", 4_000_000),
    ]

    @Test("a body Apple refuses answers 400 with Apple's code and is not recorded")
    func refused() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let purchase = try await running.simulator.purchase(appleId: "c", productId: "com.example.coins100")
            let url = "\(running.serverAPIURL)/inApps/v2/transactions/consumption/\(purchase.transactionId)"
            let token = try await key.token()
            for (body, code) in Self.refusedBodies {
                let reply = try await ServerAPIHTTP.call(.put, url, token: token, body: Data(body.utf8))
                #expect(reply.status == 400, "\(body)")
                #expect(reply.errorCode == code, "\(body)")
            }
            #expect(running.simulator.consumptionRequests.isEmpty)
            #expect(running.simulator.serverAPICalls(to: .consumption) == Self.refusedBodies.count)
        }
    }

    @Test("an unknown transaction answers 404; a percentage for a subscription 400")
    func unknownAndSubscription() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let subscription = try await running.simulator.purchase(appleId: "s", productId: "com.example.pro.monthly")
            let token = try await key.token()
            let body = Data(
                #"{"customerConsented":true,"consumptionPercentage":0,"deliveryStatus":"DELIVERED","sampleContentProvided":false}"#.utf8)
            let consumption = "\(running.serverAPIURL)/inApps/v2/transactions/consumption"
            let unknown = try await ServerAPIHTTP.call(.put, "\(consumption)/2000000999999999", token: token, body: body)
            #expect(unknown.status == 404)
            #expect(unknown.errorCode == 4_040_010)
            let percentage = try await ServerAPIHTTP.call(
                .put, "\(consumption)/\(subscription.transactionId)", token: token, body: body)
            #expect(percentage.status == 400)
            #expect(running.simulator.consumptionRequests.isEmpty)
        }
    }
}
