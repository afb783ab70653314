import AppleSimulator
import Foundation
import Testing

@Suite("notification history lists every v2 notification, delivered or not")
struct ServerAPINotificationHistoryTests {
    /// The whole first simulated day.
    static var firstDay: [String: Any] {
        ["startDate": SimulatorHarness.startMs, "endDate": SimulatorHarness.startMs + SimulatorHarness.dayMs]
    }

    @Test("a failed post, a delivered one and an unposted one, in send order with their attempts")
    func deliveredOrNot() async throws {
        let key = ServerAPIKey()
        var configuration = key.configuration()
        // Nothing listens on port 1: every connection is refused until the post's time-out. The
        // time-out is long: a second, then the default five, were too short for the one post
        // that must reach the sink on a loaded CI machine (it was recorded TIMED_OUT).
        configuration.notificationURL = "http://127.0.0.1:1/nowhere"
        configuration.notificationTimeout = .seconds(30)
        try await SimulatorHarness.withServer(configuration) { running in
            let simulator = running.simulator
            let failed = try await simulator.purchase(appleId: "n", productId: "com.example.removeads")
            simulator.notificationURL = running.notificationSinkURL
            let delivered = try await simulator.purchase(appleId: "n", productId: "com.example.coins100")
            simulator.notificationURL = nil
            let unposted = try await simulator.purchase(appleId: "n", productId: "com.example.coins100")
            _ = try await simulator.purchase(appleId: "other", productId: "com.example.coins100")
            let token = try await key.token()
            let url = "\(running.serverAPIURL)/inApps/v1/notifications/history"

            var body = Self.firstDay
            body["transactionId"] = delivered.transactionId
            let reply = try await ServerAPIHTTP.call(.post, url, token: token, json: body)
            #expect(reply.status == 200)
            #expect(reply.json?["hasMore"] as? Bool == false)
            let items = try #require(reply.json?["notificationHistory"] as? [[String: Any]])
            let payloads = try items.map { item in try jwsPayload(try #require(item["signedPayload"] as? String)) }
            #expect(payloads.map { $0["notificationType"] as? String } == ["ONE_TIME_CHARGE", "ONE_TIME_CHARGE", "ONE_TIME_CHARGE"])
            let transactionIds = try payloads.map { payload -> String? in
                let data = try #require(payload["data"] as? [String: Any])
                return try jwsPayload(try #require(data["signedTransactionInfo"] as? String))["transactionId"] as? String
            }
            #expect(transactionIds == [failed.transactionId, delivered.transactionId, unposted.transactionId])
            let attempts = items.map { item in
                (item["sendAttempts"] as? [[String: Any]] ?? []).map { $0["sendAttemptResult"] as? String }
            }
            #expect(attempts == [["NO_RESPONSE"], ["SUCCESS"], []])
            let firstAttempt = try #require((items.first?["sendAttempts"] as? [[String: Any]])?.first)
            #expect(int64(firstAttempt["attemptDate"]) == SimulatorHarness.startMs)

            body["onlyFailures"] = true
            let failures = try await ServerAPIHTTP.call(.post, url, token: token, json: body)
            #expect((failures.json?["notificationHistory"] as? [Any])?.count == 2)

            let everyone = try await ServerAPIHTTP.call(.post, url, token: token, json: Self.firstDay)
            #expect((everyone.json?["notificationHistory"] as? [Any])?.count == 4)
            let noDates = try await ServerAPIHTTP.call(.post, url, token: token, json: ["notificationType": "REFUND"])
            #expect(noDates.status == 400)
            #expect(noDates.errorCode == 4_000_015)
        }
    }

    @Test("history pages 20 at a time with paginationToken")
    func paging() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            for _ in 0..<22 {
                _ = try await running.simulator.purchase(appleId: "p", productId: "com.example.coins100")
            }
            let token = try await key.token()
            let url = "\(running.serverAPIURL)/inApps/v1/notifications/history"
            let first = try await ServerAPIHTTP.call(.post, url, token: token, json: Self.firstDay)
            #expect((first.json?["notificationHistory"] as? [Any])?.count == 20)
            #expect(first.json?["hasMore"] as? Bool == true)
            let next = try #require(first.json?["paginationToken"] as? String)
            let second = try await ServerAPIHTTP.call(.post, "\(url)?paginationToken=\(next)", token: token, json: Self.firstDay)
            #expect((second.json?["notificationHistory"] as? [Any])?.count == 2)
            #expect(second.json?["hasMore"] as? Bool == false)
            #expect(second.json?["paginationToken"] == nil)
        }
    }

    @Test("a test notification is posted, listed, and its status readable by token")
    func testNotification() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            running.simulator.notificationURL = running.notificationSinkURL
            let token = try await key.token()
            let reply = try await ServerAPIHTTP.call(
                .post, "\(running.serverAPIURL)/inApps/v1/notifications/test", token: token)
            #expect(reply.status == 200)
            let testToken = try #require(reply.json?["testNotificationToken"] as? String)
            #expect(running.simulator.sinkNotifications.count == 1)
            let status = try await ServerAPIHTTP.get(
                "\(running.serverAPIURL)/inApps/v1/notifications/test/\(testToken)", token: token)
            #expect(status.status == 200)
            let payload = try jwsPayload(try #require(status.json?["signedPayload"] as? String))
            #expect(payload["notificationType"] as? String == "TEST")
            #expect((payload["data"] as? [String: Any])?["environment"] as? String == "Sandbox")
            let attempts = status.json?["sendAttempts"] as? [[String: Any]]
            #expect(attempts?.first?["sendAttemptResult"] as? String == "SUCCESS")
            let missing = try await ServerAPIHTTP.get(
                "\(running.serverAPIURL)/inApps/v1/notifications/test/nope_0", token: token)
            #expect(missing.status == 404)
        }
    }
}
