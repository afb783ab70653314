import AppleSimulator
import Foundation
import Testing

/// The body of Extend Subscription Renewal Dates for All Active Subscribers.
func massExtensionBody(
    productId: Any? = "com.example.pro.yearly", requestIdentifier: String = "mass-1", days: Int = 7,
    storefronts: Any? = nil
) -> [String: Any] {
    var body = extensionBody(days: days, reason: 3, requestIdentifier: requestIdentifier)
    body["productId"] = productId
    body["storefrontCountryCodes"] = storefronts
    return body
}

@Suite("Extend Subscription Renewal Dates for All Active Subscribers and its status")
struct ServerAPIMassExtensionTests {
    static let dayMs = SimulatorHarness.dayMs
    static let yearEnd = SimulatorHarness.startMs + 365 * SimulatorHarness.dayMs

    @Test("a mass extension completes only once polled enough, extends who qualifies, fails the others, and notifies each then a SUMMARY")
    func polledToCompletion() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let simulator = running.simulator
            let first = try await simulator.purchase(appleId: "m1", productId: "com.example.pro.yearly")
            let maxed = try await simulator.purchase(appleId: "m2", productId: "com.example.pro.yearly")
            let german = try await simulator.purchase(appleId: "m3", productId: "com.example.pro.yearly", storefront: "DEU")
            let monthly = try await simulator.purchase(appleId: "m4", productId: "com.example.pro.monthly")
            let token = try await key.token()
            let base = "\(running.serverAPIURL)/inApps/v1/subscriptions/extend"
            // Two single extensions: m2 cannot be extended again this year.
            for identifier in ["a", "b"] {
                let reply = try await ServerAPIHTTP.call(
                    .put, "\(base)/\(maxed.transactionId)", token: token,
                    json: extensionBody(days: 1, requestIdentifier: identifier))
                #expect(reply.status == 200)
            }

            let requested = try await ServerAPIHTTP.call(.post, "\(base)/mass", token: token, json: massExtensionBody())
            #expect(requested.status == 200)
            #expect(requested.json?["requestIdentifier"] as? String == "mass-1")
            // Asked again, the same request: nothing new.
            let repeated = try await ServerAPIHTTP.call(.post, "\(base)/mass", token: token, json: massExtensionBody())
            #expect(repeated.body == requested.body)
            #expect(simulator.massRenewalExtensions.count == 1)
            #expect(try simulator.subscription(first.transactionId).expiresDateMs == Self.yearEnd)

            let status = "\(base)/mass/com.example.pro.yearly/mass-1"
            for _ in 0..<2 {
                let pending = try await ServerAPIHTTP.get(status, token: token)
                #expect(pending.status == 200)
                #expect(pending.json?["requestIdentifier"] as? String == "mass-1")
                #expect(pending.json?["complete"] as? Bool == false)
                #expect(pending.json?["completeDate"] == nil)
                #expect(int64(pending.json?["succeededCount"]) == 0)
            }
            let sentBefore = simulator.sentNotifications.count
            let done = try await ServerAPIHTTP.get(status, token: token)
            #expect(done.json?["complete"] as? Bool == true)
            #expect(int64(done.json?["completeDate"]) == SimulatorHarness.startMs)
            #expect(int64(done.json?["succeededCount"]) == 2)
            #expect(int64(done.json?["failedCount"]) == 1)
            let again = try await ServerAPIHTTP.get(status, token: token)
            #expect(again.json?["complete"] as? Bool == true)
            #expect(int64(again.json?["succeededCount"]) == 2)

            #expect(try simulator.subscription(first.transactionId).expiresDateMs == Self.yearEnd + 7 * Self.dayMs)
            #expect(try simulator.subscription(german.transactionId).expiresDateMs == Self.yearEnd + 7 * Self.dayMs)
            #expect(try simulator.subscription(maxed.transactionId).expiresDateMs == Self.yearEnd + 2 * Self.dayMs)
            #expect(try simulator.subscription(monthly.transactionId).expiresDateMs == SimulatorHarness.startMs + 7 * Self.dayMs)

            // In the order of the original transaction ids, then the summary.
            let sent = Array(simulator.sentNotifications.dropFirst(sentBefore))
            #expect(sent.map(\.notificationType) == ["RENEWAL_EXTENDED", "RENEWAL_EXTENSION", "RENEWAL_EXTENDED", "RENEWAL_EXTENSION"])
            #expect(sent.map(\.subtype) == [nil, "FAILURE", nil, "SUMMARY"])
            #expect(sent.map(\.transactionId) == [first.transactionId, maxed.transactionId, german.transactionId, ""])
            let summaryPayload = try jwsPayload(try #require(sent.last?.signedPayload))
            #expect(summaryPayload["data"] == nil)
            #expect(int64(summaryPayload["signedDate"]) == SimulatorHarness.startMs)
            let summary = try #require(summaryPayload["summary"] as? [String: Any])
            #expect(summary["requestIdentifier"] as? String == "mass-1")
            #expect(summary["productId"] as? String == "com.example.pro.yearly")
            #expect(summary["environment"] as? String == "Sandbox")
            #expect(summary["bundleId"] as? String == "com.example.app")
            #expect(int64(summary["appAppleId"]) == 1234)
            #expect(int64(summary["succeededCount"]) == 2)
            #expect(int64(summary["failedCount"]) == 1)
            #expect(summary["storefrontCountryCodes"] == nil)

            let granted = simulator.renewalExtensions.filter { $0.massExtensionProductId == "com.example.pro.yearly" }
            #expect(granted.map(\.originalTransactionId) == [first.transactionId, german.transactionId])
            #expect(simulator.massRenewalExtensions.first?.statusCalls == 4)
        }
    }

    @Test("limited to storefronts, a mass extension runs when the clock moves on; the control API lists it")
    func storefrontsAndClock() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let simulator = running.simulator
            let american = try await simulator.purchase(appleId: "us", productId: "com.example.pro.yearly")
            let german = try await simulator.purchase(appleId: "de", productId: "com.example.pro.yearly", storefront: "DEU")
            let token = try await key.token()
            let base = "\(running.serverAPIURL)/inApps/v1/subscriptions/extend"
            let body = massExtensionBody(requestIdentifier: "deu-only", days: 3, storefronts: ["DEU", "AUT"])
            #expect(try await ServerAPIHTTP.call(.post, "\(base)/mass", token: token, json: body).status == 200)

            try await simulator.advance(by: .seconds(1))
            let status = try await ServerAPIHTTP.get("\(base)/mass/com.example.pro.yearly/deu-only", token: token)
            #expect(status.json?["complete"] as? Bool == true)
            #expect(int64(status.json?["completeDate"]) == SimulatorHarness.startMs)
            #expect(int64(status.json?["succeededCount"]) == 1)
            #expect(int64(status.json?["failedCount"]) == 0)
            #expect(try simulator.subscription(american.transactionId).expiresDateMs == Self.yearEnd)
            #expect(try simulator.subscription(german.transactionId).expiresDateMs == Self.yearEnd + 3 * Self.dayMs)
            let summary = try #require(simulator.sentNotifications.last { $0.subtype == "SUMMARY" })
            let summaryPayload = try jwsPayload(try #require(summary.signedPayload))
            let fields = try #require(summaryPayload["summary"] as? [String: Any])
            #expect(fields["storefrontCountryCodes"] as? [String] == ["DEU", "AUT"])

            let listed = try #require(try await RawHTTP.get("\(running.baseURL)/control/server-api/renewal-extensions").json)
            let mass = try #require((listed["mass"] as? [[String: Any]])?.first)
            #expect(mass["request_identifier"] as? String == "deu-only")
            #expect(int64(mass["complete_date_ms"]) == SimulatorHarness.startMs)
            #expect((listed["granted"] as? [[String: Any]])?.first?["original_transaction_id"] as? String == german.transactionId)
        }
    }

    @Test("bad mass requests answer Apple's codes; an unknown status request 404 4040009")
    func refused() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let token = try await key.token()
            let base = "\(running.serverAPIURL)/inApps/v1/subscriptions/extend"
            let cases: [([String: Any], Int64)] = [
                (massExtensionBody(productId: nil), 4_000_023),
                (massExtensionBody(productId: ""), 4_000_023),
                (massExtensionBody(productId: "com.example.coins100"), 4_000_023),
                (massExtensionBody(storefronts: [String]()), 4_000_027),
                (massExtensionBody(storefronts: ["US"]), 4_000_028),
                (massExtensionBody(storefronts: "USA"), 4_000_028),
                (massExtensionBody(days: 100), 4_000_009),
            ]
            for (body, code) in cases {
                let reply = try await ServerAPIHTTP.call(.post, "\(base)/mass", token: token, json: body)
                #expect(reply.status == 400, "\(body)")
                #expect(reply.errorCode == code, "\(body)")
            }
            #expect(running.simulator.massRenewalExtensions.isEmpty)

            #expect(try await ServerAPIHTTP.call(.post, "\(base)/mass", token: token, json: massExtensionBody()).status == 200)
            for path in ["com.example.pro.yearly/other", "com.example.pro.monthly/mass-1"] {
                let unknown = try await ServerAPIHTTP.get("\(base)/mass/\(path)", token: token)
                #expect(unknown.status == 404, "\(path)")
                #expect(unknown.errorCode == 4_040_009, "\(path)")
            }
            let tooLong = try await ServerAPIHTTP.get(
                "\(base)/mass/com.example.pro.yearly/\(String(repeating: "r", count: 129))", token: token)
            #expect(tooLong.errorCode == 4_000_011)
        }
    }

    @Test("status polls can be rate limited (429, Retry-After); those do not count towards completion")
    func rateLimitedPolls() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let simulator = running.simulator
            let subscription = try await simulator.purchase(appleId: "p", productId: "com.example.pro.yearly")
            let token = try await key.token()
            let base = "\(running.serverAPIURL)/inApps/v1/subscriptions/extend"
            #expect(try await ServerAPIHTTP.call(.post, "\(base)/mass", token: token, json: massExtensionBody()).status == 200)
            simulator.failNextServerAPICalls(2, with: .rateLimited(retryAfterSeconds: 3), endpoint: .massExtendRenewalDateStatus)

            let status = "\(base)/mass/com.example.pro.yearly/mass-1"
            for _ in 0..<2 {
                let limited = try await ServerAPIHTTP.get(status, token: token)
                #expect(limited.status == 429)
                #expect(limited.retryAfter == "3")
                #expect(limited.errorCode == 4_290_000)
            }
            var answers: [Bool] = []
            for _ in 0..<3 {
                answers.append(try await ServerAPIHTTP.get(status, token: token).json?["complete"] as? Bool ?? false)
            }
            #expect(answers == [false, false, true])
            #expect(simulator.serverAPICalls(to: .massExtendRenewalDateStatus) == 5)
            #expect(simulator.massRenewalExtensions.first?.statusCalls == 3)
            #expect(try simulator.subscription(subscription.transactionId).expiresDateMs == Self.yearEnd + 7 * Self.dayMs)
        }
    }

    @Test("with no incomplete answers configured, the first status call completes the request")
    func immediate() async throws {
        let key = ServerAPIKey()
        var configuration = key.configuration()
        configuration.massExtensionIncompleteStatusCalls = 0
        try await SimulatorHarness.withServer(configuration) { running in
            let token = try await key.token()
            let base = "\(running.serverAPIURL)/inApps/v1/subscriptions/extend"
            #expect(try await ServerAPIHTTP.call(.post, "\(base)/mass", token: token, json: massExtensionBody()).status == 200)
            let status = try await ServerAPIHTTP.get("\(base)/mass/com.example.pro.yearly/mass-1", token: token)
            #expect(status.json?["complete"] as? Bool == true)
            // No subscriber: nothing succeeded, nothing failed, and the SUMMARY says so.
            #expect(int64(status.json?["succeededCount"]) == 0)
            #expect(running.simulator.sentNotifications.map(\.subtype) == ["SUMMARY"])
        }
    }
}
