import AppleSimulator
import Foundation
import Testing

/// The body of Extend a Subscription Renewal Date; each field may be given a wrong value or type.
func extensionBody(days: Any? = 30, reason: Any? = 1, requestIdentifier: Any? = "outage-1") -> [String: Any] {
    var body: [String: Any] = [:]
    body["extendByDays"] = days
    body["extendReasonCode"] = reason
    body["requestIdentifier"] = requestIdentifier
    return body
}

@Suite("Extend a Subscription Renewal Date")
struct ServerAPIExtensionTests {
    static let dayMs = SimulatorHarness.dayMs

    @Test("an extension moves the period's end, answers Apple's shape, sends RENEWAL_EXTENDED, and renewals follow the new end")
    func extended() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let simulator = running.simulator
            // Yearly, no free trial: bought 2025-01-01, it ends 2026-01-01 (day 365).
            let purchase = try await simulator.purchase(appleId: "x", productId: "com.example.pro.yearly")
            let url = "\(running.serverAPIURL)/inApps/v1/subscriptions/extend/\(purchase.transactionId)"
            let reply = try await ServerAPIHTTP.call(
                .put, url, token: try await key.token(), json: extensionBody(days: 30, reason: 3))
            let newEnd = SimulatorHarness.startMs + 395 * Self.dayMs
            #expect(reply.status == 200)
            #expect(reply.json?["originalTransactionId"] as? String == purchase.transactionId)
            #expect(reply.json?["webOrderLineItemId"] as? String == purchase.transaction.webOrderLineItemId)
            #expect(reply.json?["success"] as? Bool == true)
            #expect(int64(reply.json?["effectiveDate"]) == newEnd)
            #expect(try simulator.subscription(purchase.transactionId).expiresDateMs == newEnd)

            let sent = try #require(simulator.sentNotifications.last)
            #expect(sent.notificationType == "RENEWAL_EXTENDED")
            #expect(sent.subtype == nil)
            let payload = try jwsPayload(try #require(sent.signedPayload))
            let data = try #require(payload["data"] as? [String: Any])
            #expect(data["status"] as? Int == 1)
            let transaction = try jwsPayload(try #require(data["signedTransactionInfo"] as? String))
            #expect(transaction["transactionId"] as? String == purchase.transactionId)
            #expect(int64(transaction["expiresDate"]) == newEnd)
            let renewalInfo = try jwsPayload(try #require(data["signedRenewalInfo"] as? String))
            #expect(int64(renewalInfo["renewalDate"]) == newEnd)

            // Nothing renews at the old end; the renewal comes at the new one, and its period
            // ends a year after it (2026-01-31 → 2027-01-31).
            try await simulator.advance(days: 394)
            #expect(simulator.transactions(of: "x").count == 1)
            try await simulator.advance(days: 1)
            let renewal = try #require(simulator.transactions(of: "x").last)
            #expect(renewal.transactionReason == "RENEWAL")
            #expect(renewal.purchaseDateMs == newEnd)
            #expect(renewal.expiresDateMs == newEnd + 365 * Self.dayMs)

            let granted = try #require(simulator.renewalExtensions.first)
            #expect(simulator.renewalExtensions.count == 1)
            #expect(granted.requestIdentifier == "outage-1")
            #expect(granted.extendReasonCode == 3)
            #expect(granted.effectiveDateMs == newEnd)
            #expect(granted.massExtensionProductId == nil)
        }
    }

    /// Bodies Apple refuses, with the error code it answers (computed: `[String: Any]` is not
    /// `Sendable`, so it cannot be stored in a static).
    static var refusedBodies: [(body: [String: Any], code: Int64)] {
        [
            (extensionBody(days: 0), 4_000_009),
            (extensionBody(days: 91), 4_000_009),
            (extensionBody(days: "thirty"), 4_000_009),
            (extensionBody(days: nil), 4_000_009),
            (extensionBody(reason: 4), 4_000_010),
            (extensionBody(reason: -1), 4_000_010),
            (extensionBody(reason: nil), 4_000_010),
            (extensionBody(requestIdentifier: ""), 4_000_011),
            (extensionBody(requestIdentifier: String(repeating: "r", count: 129)), 4_000_011),
            (extensionBody(requestIdentifier: 7), 4_000_011),
        ]
    }

    @Test("bad fields answer 400 with Apple's codes; an unknown or non-original id 404, a malformed one 400")
    func refusedRequests() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let simulator = running.simulator
            let purchase = try await simulator.purchase(appleId: "x", productId: "com.example.pro.monthly")
            try await simulator.advance(days: 8)
            let renewal = try #require(simulator.transactions(of: "x").last)
            let token = try await key.token()
            let extend = "\(running.serverAPIURL)/inApps/v1/subscriptions/extend"
            for (body, code) in Self.refusedBodies {
                let reply = try await ServerAPIHTTP.call(.put, "\(extend)/\(purchase.transactionId)", token: token, json: body)
                #expect(reply.status == 400, "\(body)")
                #expect(reply.errorCode == code, "\(body)")
            }
            let notJSON = try await ServerAPIHTTP.call(
                .put, "\(extend)/\(purchase.transactionId)", token: token, body: Data("days=30".utf8))
            #expect(notJSON.status == 400)
            #expect(notJSON.errorCode == 4_000_000)

            let unknown = try await ServerAPIHTTP.call(.put, "\(extend)/2000000999999999", token: token, json: extensionBody())
            #expect(unknown.status == 404)
            #expect(unknown.errorCode == 4_040_005)
            let notOriginal = try await ServerAPIHTTP.call(
                .put, "\(extend)/\(renewal.transactionId)", token: token, json: extensionBody())
            #expect(notOriginal.status == 404)
            #expect(notOriginal.errorCode == 4_040_005)
            let malformed = try await ServerAPIHTTP.call(.put, "\(extend)/abc", token: token, json: extensionBody())
            #expect(malformed.status == 400)
            #expect(malformed.errorCode == 4_000_008)
            #expect(try await ServerAPIHTTP.call(.put, "\(extend)/\(purchase.transactionId)", token: nil, json: extensionBody()).status == 401)

            #expect(simulator.renewalExtensions.isEmpty)
            #expect(!simulator.sentNotifications.contains { $0.notificationType == "RENEWAL_EXTENDED" })
            #expect(simulator.serverAPICalls(to: .extendRenewalDate) == Self.refusedBodies.count + 5)
        }
    }

    @Test("a subscription in its free trial, in billing retry or expired is refused: 403 4030004")
    func ineligible() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let simulator = running.simulator
            let trial = try await simulator.purchase(appleId: "trial", productId: "com.example.pro.monthly")
            let retrying = try await simulator.purchase(appleId: "retry", productId: "com.example.pro.monthly")
            let lapsing = try await simulator.purchase(appleId: "lapse", productId: "com.example.pro.monthly")
            try await simulator.setBillingFails(originalTransactionId: retrying.transactionId, true)
            try await simulator.setAutoRenew(originalTransactionId: lapsing.transactionId, enabled: false)
            let token = try await key.token()
            let extend = "\(running.serverAPIURL)/inApps/v1/subscriptions/extend"

            let inTrial = try await ServerAPIHTTP.call(.put, "\(extend)/\(trial.transactionId)", token: token, json: extensionBody())
            #expect(inTrial.status == 403)
            #expect(inTrial.errorCode == 4_030_004)
            #expect((inTrial.json?["errorMessage"] as? String)?.isEmpty == false)

            // The trials end on day 7: one renewal fails (billing retry, in grace), one expires.
            try await simulator.advance(days: 8)
            for (id, name) in [(retrying.transactionId, "billing retry"), (lapsing.transactionId, "expired")] {
                let reply = try await ServerAPIHTTP.call(.put, "\(extend)/\(id)", token: token, json: extensionBody())
                #expect(reply.status == 403, "\(name)")
                #expect(reply.errorCode == 4_030_004, "\(name)")
            }
            #expect(simulator.renewalExtensions.isEmpty)
        }
    }

    /// An extension's answer, field by field (JSON's key order is not part of it).
    static func answer(_ reply: ServerAPIHTTP.Reply) -> [String] {
        let json = reply.json ?? [:]
        return ["\(int64(json["effectiveDate"]) ?? -1)", json["originalTransactionId"] as? String ?? "-",
                json["webOrderLineItemId"] as? String ?? "-", "\(json["success"] as? Bool ?? false)"]
    }

    @Test("a repeated requestIdentifier answers the first answer without extending again; a third extension in a year is 403 4030005")
    func idempotentAndLimited() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let simulator = running.simulator
            let purchase = try await simulator.purchase(appleId: "y", productId: "com.example.pro.yearly")
            let token = try await key.token()
            let url = "\(running.serverAPIURL)/inApps/v1/subscriptions/extend/\(purchase.transactionId)"
            let yearEnd = SimulatorHarness.startMs + 365 * Self.dayMs

            let first = try await ServerAPIHTTP.call(.put, url, token: token, json: extensionBody(days: 10, requestIdentifier: "r1"))
            #expect(int64(first.json?["effectiveDate"]) == yearEnd + 10 * Self.dayMs)
            // The same request identifier with other days: Apple answers the first grant again.
            let again = try await ServerAPIHTTP.call(.put, url, token: token, json: extensionBody(days: 20, requestIdentifier: "r1"))
            #expect(again.status == 200)
            // The same answer (its keys in any order).
            #expect(Self.answer(again) == Self.answer(first))
            #expect(try simulator.subscription(purchase.transactionId).expiresDateMs == yearEnd + 10 * Self.dayMs)

            let second = try await ServerAPIHTTP.call(.put, url, token: token, json: extensionBody(days: 5, requestIdentifier: "r2"))
            #expect(int64(second.json?["effectiveDate"]) == yearEnd + 15 * Self.dayMs)
            let third = try await ServerAPIHTTP.call(.put, url, token: token, json: extensionBody(days: 5, requestIdentifier: "r3"))
            #expect(third.status == 403)
            #expect(third.errorCode == 4_030_005)
            // A granted request identifier still answers as the first time, past the limit.
            let replayed = try await ServerAPIHTTP.call(.put, url, token: token, json: extensionBody(requestIdentifier: "r2"))
            #expect(Self.answer(replayed) == Self.answer(second))

            #expect(simulator.renewalExtensions.map(\.requestIdentifier) == ["r1", "r2"])
            #expect(try simulator.subscription(purchase.transactionId).expiresDateMs == yearEnd + 15 * Self.dayMs)
            #expect(simulator.sentNotifications.filter { $0.notificationType == "RENEWAL_EXTENDED" }.count == 2)
        }
    }

    @Test("a rule makes single extensions answer 429 with Retry-After, and extends nothing until it is spent")
    func rateLimited() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let simulator = running.simulator
            let purchase = try await simulator.purchase(appleId: "z", productId: "com.example.pro.yearly")
            let rule = try await RawHTTP.post(
                "\(running.baseURL)/control/server-api/failures",
                json: ["http_status": 429, "retry_after": 4, "endpoint": "extend_renewal_date"] as [String: Any])
            #expect(rule.status == 201)
            let url = "\(running.serverAPIURL)/inApps/v1/subscriptions/extend/\(purchase.transactionId)"
            let token = try await key.token()
            let limited = try await ServerAPIHTTP.call(.put, url, token: token, json: extensionBody())
            #expect(limited.status == 429)
            #expect(limited.retryAfter == "4")
            #expect(limited.errorCode == 4_290_000)
            #expect(simulator.renewalExtensions.isEmpty)
            #expect(try await ServerAPIHTTP.call(.put, url, token: token, json: extensionBody()).status == 200)
            #expect(simulator.renewalExtensions.count == 1)
        }
    }
}
