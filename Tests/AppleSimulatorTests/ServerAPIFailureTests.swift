import AppleSimulator
import AsyncHTTPClient
import Foundation
import Testing

@Suite("the Server API fails on demand")
struct ServerAPIFailureTests {
    @Test("the next two calls are rate limited with Retry-After, then the answer is normal; calls are counted")
    func rateLimitedThenSuccess() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let purchase = try await running.simulator.purchase(appleId: "r", productId: "com.example.removeads")
            running.simulator.failNextServerAPICalls(2, with: .rateLimited(retryAfterSeconds: 7), endpoint: .transactionInfo)
            let token = try await key.token()
            let url = "\(running.serverAPIURL)/inApps/v1/transactions/\(purchase.transactionId)"
            // Another endpoint is not covered by the rule.
            let history = try await ServerAPIHTTP.get(
                "\(running.serverAPIURL)/inApps/v2/history/\(purchase.transactionId)", token: token)
            #expect(history.status == 200)
            for _ in 0..<2 {
                let limited = try await ServerAPIHTTP.get(url, token: token)
                #expect(limited.status == 429)
                #expect(limited.retryAfter == "7")
                #expect(limited.errorCode == 4_290_000)
                #expect(limited.json?["errorMessage"] as? String == "Rate limit exceeded.")
            }
            #expect(try await ServerAPIHTTP.get(url, token: token).status == 200)
            #expect(running.simulator.serverAPICalls(to: .transactionInfo) == 3)
            #expect(running.simulator.serverAPICalls[.transactionHistory] == 1)
            #expect(running.simulator.serverAPIFailureRules.isEmpty)
        }
    }

    @Test("a 5xx and a 401 set through the control API, then normal answers; stats per endpoint")
    func controlAPI() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let purchase = try await running.simulator.purchase(appleId: "c", productId: "com.example.removeads")
            let control = "\(running.baseURL)/control/server-api"
            #expect(try await RawHTTP.post("\(control)/failures", json: ["http_status": 503]).status == 201)
            #expect(try await RawHTTP.post("\(control)/failures", json: ["http_status": 401]).status == 201)
            #expect(try await RawHTTP.post("\(control)/failures", json: ["http_status": 302]).status == 400)
            let token = try await key.token()
            let url = "\(running.serverAPIURL)/inApps/v1/transactions/\(purchase.transactionId)"
            let unavailable = try await ServerAPIHTTP.get(url, token: token)
            #expect(unavailable.status == 503)
            #expect(unavailable.errorCode == 5_000_000)
            #expect(unavailable.json?["errorMessage"] as? String == "An unknown error occurred.")
            let unauthorized = try await ServerAPIHTTP.get(url, token: token)
            #expect(unauthorized.status == 401)
            #expect(unauthorized.body.isEmpty)
            #expect(try await ServerAPIHTTP.get(url, token: token).status == 200)
            let stats = try await RawHTTP.get("\(control)/stats").json
            #expect(stats?["transaction_info"] as? Int == 3)
            #expect(stats?["consumption"] as? Int == 0)
        }
    }

    @Test("a slow answer runs past the client's time-out")
    func slow() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let purchase = try await running.simulator.purchase(appleId: "d", productId: "com.example.removeads")
            running.simulator.failNextServerAPICalls(1, with: .normal, delay: .milliseconds(1_500))
            let token = try await key.token()
            let url = "\(running.serverAPIURL)/inApps/v1/transactions/\(purchase.transactionId)"
            await #expect(throws: HTTPClientError.self) {
                _ = try await ServerAPIHTTP.call(.get, url, token: token, timeout: .milliseconds(200))
            }
        }
    }
}
