import AppleSimulator
import Foundation
import Testing

@Suite("Set App Account Token and Finish Transaction")
struct ServerAPITransactionUpdateTests {
    @Test("Set App Account Token answers 200 with no body; the subscription's transactions and later renewals sign it")
    func appAccountToken() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let simulator = running.simulator
            let purchase = try await simulator.purchase(appleId: "a", productId: "com.example.pro.monthly")
            try await simulator.advance(days: 8)
            let renewal = try #require(simulator.transactions(of: "a").last)
            let appAccountToken = UUID()
            let token = try await key.token()
            let reply = try await ServerAPIHTTP.call(
                .put, "\(running.serverAPIURL)/inApps/v1/transactions/\(purchase.transactionId)/appAccountToken",
                token: token, json: ["appAccountToken": appAccountToken.uuidString])
            #expect(reply.status == 200)
            #expect(reply.body.isEmpty)
            let expected = appAccountToken.uuidString.lowercased()

            let info = try await ServerAPIHTTP.get(
                "\(running.serverAPIURL)/inApps/v1/transactions/\(renewal.transactionId)", token: token)
            let signed = try jwsPayload(try #require(info.json?["signedTransactionInfo"] as? String))
            #expect(signed["appAccountToken"] as? String == expected)
            let history = try await ServerAPIHTTP.get("\(running.serverAPIURL)/inApps/v2/history/\(purchase.transactionId)", token: token)
            let tokens = try history.signedTransactions.map { try jwsPayload($0)["appAccountToken"] as? String }
            #expect(tokens == [expected, expected])

            // The next renewal copies the original's token, and so does its notification.
            try await simulator.advance(days: 31)
            let next = try #require(simulator.transactions(of: "a").last)
            #expect(next.transactionId != renewal.transactionId)
            #expect(next.appAccountToken == appAccountToken)
            #expect(try jwsPayload(try simulator.signedTransaction(next.transactionId))["appAccountToken"] as? String == expected)
            let didRenew = try #require(simulator.sentNotifications.last)
            #expect(didRenew.notificationType == "DID_RENEW")
            let didRenewPayload = try jwsPayload(try #require(didRenew.signedPayload))
            let data = try #require(didRenewPayload["data"] as? [String: Any])
            let notified = try jwsPayload(try #require(data["signedTransactionInfo"] as? String))
            #expect(notified["appAccountToken"] as? String == expected)
        }
    }

    @Test("Set App Account Token refuses a token that is no UUID, a renewal's id and an unknown id, changing nothing")
    func appAccountTokenRefused() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let simulator = running.simulator
            let purchase = try await simulator.purchase(appleId: "a", productId: "com.example.pro.monthly")
            try await simulator.advance(days: 8)
            let renewal = try #require(simulator.transactions(of: "a").last)
            let token = try await key.token()
            let transactions = "\(running.serverAPIURL)/inApps/v1/transactions"
            let valid = ["appAccountToken": UUID().uuidString]
            let cases: [(id: String, body: Data, status: Int, code: Int64)] = [
                (purchase.transactionId, Data(#"{"appAccountToken":"not-a-uuid"}"#.utf8), 400, 4_000_183),
                (purchase.transactionId, Data(#"{"appAccountToken":5}"#.utf8), 400, 4_000_183),
                (purchase.transactionId, Data("{}".utf8), 400, 4_000_183),
                (purchase.transactionId, Data("token".utf8), 400, 4_000_000),
                (renewal.transactionId, try JSONSerialization.data(withJSONObject: valid), 400, 4_000_187),
                ("2000000999999999", try JSONSerialization.data(withJSONObject: valid), 404, 4_040_010),
                ("abc", try JSONSerialization.data(withJSONObject: valid), 400, 4_000_006),
            ]
            for (id, body, status, code) in cases {
                let reply = try await ServerAPIHTTP.call(.put, "\(transactions)/\(id)/appAccountToken", token: token, body: body)
                #expect(reply.status == status, "\(id) \(String(decoding: body, as: UTF8.self))")
                #expect(reply.errorCode == code, "\(id) \(String(decoding: body, as: UTF8.self))")
            }
            #expect(simulator.transactions(of: "a").allSatisfy { $0.appAccountToken == nil })
            #expect(simulator.serverAPICalls(to: .setAppAccountToken) == cases.count)
        }
    }

    @Test("Finish Transaction answers 200 with no body, finishes the transaction and records every call")
    func finish() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let simulator = running.simulator
            let coins = try await simulator.purchase(appleId: "f", productId: "com.example.coins100")
            let token = try await key.token()
            let transactions = "\(running.serverAPIURL)/inApps/v1/transactions"
            simulator.failNextServerAPICalls(1, with: .rateLimited(retryAfterSeconds: 1), endpoint: .finishTransaction)
            #expect(try await ServerAPIHTTP.call(.post, "\(transactions)/\(coins.transactionId)/finish", token: token).status == 429)
            #expect(simulator.finishRequests.isEmpty)

            for _ in 0..<2 {
                let reply = try await ServerAPIHTTP.call(.post, "\(transactions)/\(coins.transactionId)/finish", token: token)
                #expect(reply.status == 200)
                #expect(reply.body.isEmpty)
            }
            #expect(try simulator.transaction(coins.transactionId).isFinished)
            #expect(simulator.finishRequests.map(\.transactionId) == [coins.transactionId, coins.transactionId])
            #expect(simulator.finishRequests.map(\.wasAlreadyFinished) == [false, true])
            #expect(simulator.finishRequests.first?.simulatedNowMs == SimulatorHarness.startMs)
            #expect(simulator.finishRequestCounts == [coins.transactionId: 2])

            let unknown = try await ServerAPIHTTP.call(.post, "\(transactions)/2000000999999999/finish", token: token)
            #expect(unknown.status == 404)
            #expect(unknown.errorCode == 4_040_010)
            let malformed = try await ServerAPIHTTP.call(.post, "\(transactions)/abc/finish", token: token)
            #expect(malformed.status == 400)
            #expect(malformed.errorCode == 4_000_006)
            #expect(simulator.finishRequests.count == 2)

            let listed = try await RawHTTP.get("\(running.baseURL)/control/server-api/finish-requests")
            let rows = try #require(try JSONSerialization.jsonObject(with: listed.body) as? [[String: Any]])
            #expect(rows.map { $0["transaction_id"] as? String } == [coins.transactionId, coins.transactionId])
            let counts = try await RawHTTP.get("\(running.baseURL)/control/server-api/finish-counts")
            #expect(counts.json?[coins.transactionId] as? Int == 2)
        }
    }
}
