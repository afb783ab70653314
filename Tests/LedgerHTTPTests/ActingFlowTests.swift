import AppleSimulator
import Foundation
import Ledger
import Postgres
import Testing

/// Support acts (issue 26): each asks Apple over real HTTP (the simulator), and each is recorded
/// with its actor, reason, and Apple's request and answer.
@Suite("Support acts: renewal extensions and attribution fixes")
struct ActingFlowTests {
    static let support = LedgerHarness.supportToken

    static func extend(_ ledger: LedgerHarness, _ original: String, days: Int, reason: String = "service_issue", requestId: String) async throws -> LedgerHarness.Answer {
        try await ledger.post(
            "/v1/subscriptions/\(original)/extend", ["days": days, "reason": reason, "request_id": requestId], token: support)
    }

    @Test("an extension moves the expiry once per request id, is told and in the timeline, and Apple's third in a year is refused with its reason")
    func extended() async throws {
        try await LedgerHarness.with(askApple: true) { ledger in
            let (_, monthly) = try await ledger.orderAndBuy(user: "x-bob", product: "com.example.pro.monthly", appleId: "apple-x1")
            #expect(try await ledger.submit(user: "x-bob", purchase: monthly).outcome == "delivered")
            let original = monthly.transaction.originalTransactionId
            // Apple extends no free trial (4030004): the first paid period first.
            _ = try await ledger.simulator.advance(days: 8)
            try await ledger.eventually("the paid period is recorded") { try await ledger.count("SubscriptionRenewalSeen") >= 1 }
            let before = try await ledger.get("/v1/subscriptions/\(original)")
            let expiresBefore = try #require(before.json["expires_at"] as? String)

            // Only support acts; bad input is refused before Apple is asked.
            #expect(try await ledger.post("/v1/subscriptions/\(original)/extend", ["days": 10, "reason": "other", "request_id": "r0"]).status == 403)
            for bad: [String: Any] in [
                ["days": 0, "reason": "other", "request_id": "r0"], ["days": 91, "reason": "other", "request_id": "r0"],
                ["days": 10, "reason": "because", "request_id": "r0"], ["days": 10, "reason": "other"],
            ] {
                let answer = try await ledger.post("/v1/subscriptions/\(original)/extend", bad, token: Self.support)
                #expect(answer.status == 400, "\(bad)")
            }
            #expect(try await Self.extend(ledger, "999999999", days: 5, requestId: "r-none").status == 404)
            #expect(ledger.simulator.renewalExtensions.isEmpty)

            let first = try await Self.extend(ledger, original, days: 10, requestId: "r1")
            #expect(first.status == 200, "\(first.json)")
            let effective = try #require(first.json["effective_date"] as? String)
            #expect(first.json["new_expires_at"] as? String == effective)
            let millis = { (text: String) -> Int64 in Int64((ISO8601DateFormatter.withFractions.date(from: text)?.timeIntervalSince1970 ?? 0) * 1_000) }
            #expect(millis(effective) - millis(expiresBefore) == 10 * 86_400_000, "\(expiresBefore) → \(effective)")
            let after = try await ledger.get("/v1/subscriptions/\(original)")
            #expect(after.json["expires_at"] as? String == effective)

            // The same request again: the first answer, Apple not asked again; other content: 409.
            let again = try await Self.extend(ledger, original, days: 10, requestId: "r1")
            #expect(again.status == 200)
            #expect(again.json["effective_date"] as? String == effective)
            #expect(ledger.simulator.renewalExtensions.count == 1)
            #expect(try await Self.extend(ledger, original, days: 11, requestId: "r1").status == 409)

            // Recorded: the act with its actor, and Apple's request and answer as documents.
            let acts = try await ledger.events("SubscriptionRenewalExtended")
            #expect(acts.count == 1)
            guard case .subscriptionRenewalExtended(let act)? = acts.first else { throw HarnessError("no act") }
            #expect(act.reason == .serviceIssue && act.days == 10 && act.extended)
            let documents: Int64 = try await ledger.pool.withConnection {
                try $0.query("SELECT count(*) FROM documents WHERE encode(sha256, 'hex') = ANY(\(PostgresArray([Optional(act.requestDocumentSha256), Optional(act.answerDocumentSha256)])))")[0].decode(0)
            }
            #expect(documents == 2)
            let actor: String = try await ledger.pool.withConnection {
                try $0.query("SELECT metadata->>'actor' FROM events WHERE event_type = 'SubscriptionRenewalExtended'")[0].decode(0)
            }
            #expect(actor.hasPrefix("api:"))
            let timeline = try await ledger.get("/v1/timelines/transactions/\(original)", token: LedgerHarness.financeToken)
            let summaries = (timeline.json["entries"] as? [[String: Any]] ?? []).compactMap { $0["summary"] as? String }
            #expect(summaries.contains { $0.contains("extend subscription \(original) by 10 days (service_issue, request r1): extended to \(effective)") }, "\(summaries)")

            // Told to the app's backends once, with the new expiry.
            try await ledger.eventually("the extension is in the feed") {
                let feed = try await ledger.get("/v1/events?after=0&limit=1000")
                return (feed.json["events"] as? [[String: Any]] ?? []).contains { $0["type"] as? String == "subscription.extended" }
            }
            let feed = try await ledger.get("/v1/events?after=0&limit=1000")
            let told = (feed.json["events"] as? [[String: Any]] ?? []).filter { $0["type"] as? String == "subscription.extended" }
            #expect(told.count == 1)
            let data = told.first?["data"] as? [String: Any] ?? [:]
            #expect(data["days"] as? Int == 10 && data["user_id"] as? String == "x-bob" && data["expires_at"] as? String == effective)

            // Apple allows two extensions per year: the third is refused, with Apple's code, recorded.
            #expect(try await Self.extend(ledger, original, days: 5, reason: "customer_satisfaction", requestId: "r2").status == 200)
            let third = try await Self.extend(ledger, original, days: 5, reason: "other", requestId: "r3")
            #expect(third.status == 422)
            let error = third.json["error"] as? [String: Any] ?? [:]
            #expect(error["code"] as? String == "extension_refused")
            #expect((error["message"] as? String)?.contains("4030005") == true, "\(error)")
            #expect(try await ledger.count("SubscriptionRenewalExtended") == 3)
            #expect(try await Self.extend(ledger, original, days: 5, reason: "other", requestId: "r3").status == 422, "a refusal answers again as recorded")
            #expect(ledger.simulator.renewalExtensions.count == 2)
        }
    }

    /// Alice paid for remove-ads before the app knew her: her purchase went to the anonymous
    /// user the app had then. Support attaches her order's token to it.
    static func anonymousPurchase(_ ledger: LedgerHarness) async throws -> (original: String, token: String) {
        let purchase = try await ledger.simulator.purchase(appleId: "apple-anon", productId: "com.example.removeads", environment: .production)
        #expect(try await ledger.submit(user: "x-anon", purchase: purchase).outcome == "delivered")
        let order = try await ledger.post("/v1/orders", ["user_id": "x-alice", "product_id": "com.example.coins100"])
        return (purchase.transaction.originalTransactionId, try #require(order.json["app_account_token"] as? String))
    }

    @Test("under keep, attaching another user's token is refused without asking Apple, and recorded")
    func tokenKept() async throws {
        try await LedgerHarness.with(policy: .keep, askApple: true) { ledger in
            let (original, token) = try await Self.anonymousPurchase(ledger)
            let path = "/v1/transactions/\(original)/app-account-token"
            let refused = try await ledger.request(.PUT, path, body: #"{"app_account_token":"\#(token)","reason":"ticket 42"}"#, token: Self.support)
            #expect(refused.status == 409)
            #expect((refused.json["error"] as? [String: Any])?["code"] as? String == "owned_by_another_user")
            let acts = try await ledger.events("AppAccountTokenSet")
            guard case .appAccountTokenSet(let act)? = acts.first else { throw HarnessError("not recorded") }
            let xAlice = try await ledger.recorded("x-alice")
            #expect(act.outcome == "refused" && act.refusal == "owned_by_another_user" && act.userId == xAlice)
            // Support's words about her are sealed under her key, and open to them.
            let reason = try #require(act.reason)
            #expect(reason != "ticket 42")
            #expect(try await ledger.server.service.people.open(reason) == "ticket 42")
            #expect(act.requestDocumentSha256 == nil, "Apple was not asked")
            let ownership = try await ledger.get("/v1/ownership/\(original)")
            #expect(ownership.json["owner_user_id"] as? String == "x-anon")
            // Bad input.
            #expect(try await ledger.request(.PUT, path, body: #"{"app_account_token":"not-a-uuid"}"#, token: Self.support).status == 400)
            let unknown = try await ledger.request(.PUT, path, body: #"{"app_account_token":"\#(UUID().uuidString)"}"#, token: Self.support)
            #expect(unknown.status == 422)
            #expect((unknown.json["error"] as? [String: Any])?["code"] as? String == "unknown_app_account_token")
            #expect(try await ledger.request(.PUT, "/v1/transactions/424242/app-account-token", body: #"{"app_account_token":"\#(token)"}"#, token: Self.support).status == 404)
            #expect(try await ledger.request(.PUT, path, body: #"{"app_account_token":"\#(token)"}"#, token: LedgerHarness.financeToken).status == 403)
        }
    }

    @Test("under transfer, the token is set with Apple and the purchase moves to the token's user, recorded in ownership's history")
    func tokenTransferred() async throws {
        try await LedgerHarness.with(policy: .transfer, askApple: true) { ledger in
            let (original, token) = try await Self.anonymousPurchase(ledger)
            let set = try await ledger.request(
                .PUT, "/v1/transactions/\(original)/app-account-token", body: #"{"app_account_token":"\#(token.uppercased())"}"#, token: Self.support)
            #expect(set.status == 200, "\(set.json)")
            #expect(set.json["owner_user_id"] as? String == "x-alice")
            #expect(set.json["app_account_token"] as? String == token.lowercased())
            let ownership = try await ledger.get("/v1/ownership/\(original)")
            #expect(ownership.json["owner_user_id"] as? String == "x-alice")
            let history = (ownership.json["history"] as? [[String: Any]] ?? []).map { $0["user_id"] as? String ?? "-" }
            #expect(history == ["x-anon", "x-alice"])
            let alice = try await ledger.get("/v1/users/x-alice")
            #expect((alice.json["entitlements"] as? [[String: Any]] ?? []).contains { $0["original_transaction_id"] as? String == original })
            let acts = try await ledger.events("AppAccountTokenSet")
            guard case .appAccountTokenSet(let act)? = acts.first else { throw HarnessError("not recorded") }
            let xAnon = try await ledger.recorded("x-anon")
            #expect(act.outcome == "set" && act.previousUserId == xAnon && act.answerDocumentSha256 != nil)
            #expect(ledger.simulator.appAccountTokensSet == 1)
            // A PUT again (a retry, a double submit): the first act's answer; Apple is not asked
            // again and no second act is recorded.
            let again = try await ledger.request(
                .PUT, "/v1/transactions/\(original)/app-account-token", body: #"{"app_account_token":"\#(token)"}"#, token: Self.support)
            #expect(again.status == 200, "\(again.json)")
            #expect(again.json["owner_user_id"] as? String == "x-alice")
            #expect(ledger.simulator.appAccountTokensSet == 1)
            #expect(try await ledger.events("AppAccountTokenSet").count == 1)
            #expect(try await ledger.events("OwnershipTransferred").count == 1)
            // Apple holds the token now: its signed transaction says so.
            let signed = ledger.simulator.transactions(of: "apple-anon").first { $0.originalTransactionId == original }
            #expect(signed?.appAccountToken?.uuidString.lowercased() == token.lowercased())
            // Told as an ownership transfer.
            try await ledger.eventually("the transfer is in the feed") {
                let feed = try await ledger.get("/v1/events?after=0&limit=1000")
                return (feed.json["events"] as? [[String: Any]] ?? []).contains {
                    $0["type"] as? String == "ownership.transferred" && ($0["data"] as? [String: Any])?["user_id"] as? String == "x-alice"
                }
            }
        }
    }
}

extension ISO8601DateFormatter {
    static var withFractions: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}

@Suite("Finishing transactions server-side")
struct FinishTransactionFlowTests {
    @Test("each delivered transaction is finished with Apple once, retried while Apple is down, recorded in its timeline")
    func finished() async throws {
        try await LedgerHarness.with(askApple: true, finishTransactions: true) { ledger in
            // Apple is down for the first calls (more than one call's retries): the worker asks again later.
            ledger.simulator.injectServerAPIFailure(ServerAPIFailureRule(.serverError(status: 503), next: 6, endpoint: .finishTransaction))
            var transactions: [String] = []
            for index in 0..<3 {
                let (_, coins) = try await ledger.orderAndBuy(user: "f-\(index)", product: "com.example.coins100", appleId: "apple-f\(index)")
                #expect(try await ledger.submit(user: "f-\(index)", purchase: coins).outcome == "delivered")
                transactions.append(coins.transactionId)
            }
            try await ledger.eventually("every delivery is finished", within: .seconds(30)) {
                try await ledger.count("TransactionFinished") == 3
            }
            let counts = ledger.simulator.finishRequestCounts
            for id in transactions { #expect(counts[id] == 1, "\(id) finished once: \(counts)") }
            // Every delivery is finished, and the servers' shared mark says so: a server starting
            // now begins its scan after them.
            let reads = ledger.server.service.reads
            #expect(try await reads.unfinishedDeliveries(after: 0).isEmpty)
            try await ledger.eventually("the mark passes the last delivery", within: .seconds(10)) {
                try await reads.position(of: .unfinishedDeliveries) > 0
            }
            let finished = try await ledger.events("TransactionFinished")
            #expect(finished.allSatisfy { if case .transactionFinished(let f) = $0 { f.outcome == "finished" } else { false } })
            let timeline = try await ledger.get("/v1/timelines/transactions/\(transactions[0])", token: LedgerHarness.financeToken)
            let summaries = (timeline.json["entries"] as? [[String: Any]] ?? []).compactMap { $0["summary"] as? String }
            #expect(summaries.contains { $0.hasPrefix("Finished transaction \(transactions[0]) with Apple") }, "\(summaries)")
        }
    }

    @Test("a transaction Apple does not know yet (404 4040010) is asked again on its own backoff and holds back none after it")
    func unknownToAppleWaits() async throws {
        try await LedgerHarness.with(askApple: true, finishTransactions: true) { ledger in
            // A signed transaction Apple's Server API has not heard of (ids of its own, signed
            // by the CA the ledger trusts), delivered first; then an ordinary purchase.
            let bought = try await ledger.simulator.purchase(appleId: "apple-f9", productId: "com.example.removeads", environment: .production)
            var fields = try #require(ActingProofTests.payload(ofJWS: bought.signedTransaction))
            fields["transactionId"] = "340000999999991"
            fields["originalTransactionId"] = "340000999999991"
            let unknown = try ledger.simulator.certificateAuthority.sign(payloadJSON: JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]))
            #expect(try await ledger.post("/v1/transactions", ["user_id": "f-9", "signed_transaction": unknown]).outcome == "delivered")
            let (_, coins) = try await ledger.orderAndBuy(user: "f-10", product: "com.example.coins100", appleId: "apple-f10")
            #expect(try await ledger.submit(user: "f-10", purchase: coins).outcome == "delivered")

            try await ledger.eventually("the purchase after it is finished", within: .seconds(30)) {
                try await ledger.count("TransactionFinished") == 1
            }
            #expect(ledger.simulator.finishRequestCounts[coins.transactionId] == 1)
            // The unknown one: asked again (2 s, then 4 s later), never recorded as refused.
            try await ledger.eventually("Apple is asked again about the unknown transaction", within: .seconds(30)) {
                ledger.simulator.serverAPICalls(to: .finishTransaction) - ledger.simulator.finishRequestCounts.values.reduce(0, +) >= 2
            }
            #expect(try await ledger.count("TransactionFinished") == 1, "nothing recorded for the transaction Apple does not know")
            // The servers' shared mark never passes the transaction still waiting, so a server
            // starting now asks about it again.
            let reads = ledger.server.service.reads
            let left = try await reads.unfinishedDeliveries(after: 0)
            #expect(left.map(\.transactionId) == ["340000999999991"])
            #expect(try await reads.position(of: .unfinishedDeliveries) < left[0].position)
        }
    }

    @Test("without LEDGER_FINISH_TRANSACTIONS the ledger finishes nothing")
    func notAsked() async throws {
        try await LedgerHarness.with(askApple: true) { ledger in
            let (_, coins) = try await ledger.orderAndBuy(user: "f-x", product: "com.example.coins100", appleId: "apple-fx")
            #expect(try await ledger.submit(user: "f-x", purchase: coins).outcome == "delivered")
            // No worker runs without the setting: nothing asked, nothing recorded (no wait could
            // prove an absence better than the server's own parts say it).
            #expect(ledger.simulator.finishRequests.isEmpty)
            #expect(try await ledger.count("TransactionFinished") == 0)
        }
    }
}

@Suite("Offer signatures the ledger issues")
struct OfferSignatureFlowTests {
    static let monthly = "com.example.pro.monthly"

    static func sign(_ ledger: LedgerHarness, _ body: [String: Any]) async throws -> LedgerHarness.Answer {
        try await ledger.post("/v1/offers/signatures", body)
    }

    @Test("a promotional offer the ledger signed is redeemed in the simulator, and the purchase's timeline names the signature; a tampered one is refused")
    func redeemed() async throws {
        try await LedgerHarness.with(askApple: true) { ledger in
            let order = try await ledger.post("/v1/orders", ["user_id": "o-ann", "product_id": Self.monthly])
            let token = try #require(order.json["app_account_token"] as? String)
            let signed = try await Self.sign(ledger, ["user_id": "o-ann", "product_id": Self.monthly, "kind": "promotional", "offer_id": "WINBACK3"])
            #expect(signed.status == 201, "\(signed.json)")
            let signature = try #require(signed.json["signature"] as? String)
            #expect(signed.json["key_id"] as? String == LedgerHarness.keyId)
            #expect(UUID(uuidString: signed.json["nonce"] as? String ?? "") != nil)
            #expect(signed.json["app_account_token"] as? String == token)
            #expect(signed.json["expires_at"] is NSNull)
            #expect(signature.split(separator: ".").count == 3)

            // StoreKit (the simulator) refuses a signature changed in transit.
            var parts = signature.split(separator: ".").map(String.init)
            parts[1] = String(parts[1].reversed())
            await #expect(throws: (any Error).self) {
                _ = try await ledger.simulator.purchase(
                    appleId: "apple-o1", productId: Self.monthly, environment: .production, appAccountToken: UUID(uuidString: token),
                    offer: .promotionalOfferJWS(parts.joined(separator: ".")))
            }
            // And accepts the ledger's own: the purchase carries Apple's offerIdentifier.
            let purchase = try await ledger.simulator.purchase(
                appleId: "apple-o1", productId: Self.monthly, environment: .production, appAccountToken: UUID(uuidString: token),
                offer: .promotionalOfferJWS(signature))
            let delivered = try await ledger.post("/v1/transactions", ["user_id": "o-ann", "signed_transaction": purchase.signedTransaction])
            #expect(delivered.outcome == "delivered", "\(delivered.json)")
            let timeline = try await ledger.get("/v1/timelines/transactions/\(purchase.transactionId)", token: LedgerHarness.financeToken)
            let summaries = (timeline.json["entries"] as? [[String: Any]] ?? []).compactMap { $0["summary"] as? String }
            #expect(summaries.contains { $0.hasPrefix("Signed a promotional offer (StoreKit 2 JWS) for user o-ann: \(Self.monthly) offer WINBACK3") }, "\(summaries)")
            #expect(summaries.contains { $0.contains("redeeming offer WINBACK3") }, "\(summaries)")
            // Finance sees the discounted sale by its offer.
            let report = try await ledger.get("/v1/reports/revenue?from=2000-01-01&to=2100-12-31&group_by=offer", token: LedgerHarness.financeToken)
            let keys = (report.json["rows"] as? [[String: Any]] ?? []).compactMap { $0["key"] as? String }
            #expect(keys.contains("WINBACK3"), "\(report.json)")
            // Recorded: who was offered what, never the key.
            let issued = try await ledger.events("OfferSignatureIssued")
            #expect(issued.count == 1)
            let payload: String = try await ledger.pool.withConnection {
                try $0.query("SELECT payload::text FROM events WHERE event_type = 'OfferSignatureIssued'")[0].decode(0)
            }
            #expect(!payload.contains("PRIVATE KEY") && !payload.contains(signature))
        }
    }

    @Test("a legacy signature expires after 24 hours and the simulator then refuses it; bad requests are 400, unknown products 404")
    func legacyAndBadInput() async throws {
        try await LedgerHarness.with(askApple: true) { ledger in
            _ = try await ledger.post("/v1/orders", ["user_id": "o-bea", "product_id": Self.monthly])
            let signed = try await Self.sign(ledger, ["user_id": "o-bea", "product_id": Self.monthly, "kind": "promotional_legacy", "offer_id": "LOYAL"])
            #expect(signed.status == 201, "\(signed.json)")
            let timestamp = try #require(signed.json["timestamp"] as? Int)
            #expect(signed.json["expires_at"] is String)
            let redemption = PromotionalOfferSignature(
                offerIdentifier: "LOYAL", keyIdentifier: try #require(signed.json["key_id"] as? String),
                nonce: try #require(UUID(uuidString: signed.json["nonce"] as? String ?? "")), timestamp: Int64(timestamp),
                signature: try #require(signed.json["signature"] as? String))
            let token = (signed.json["app_account_token"] as? String).flatMap(UUID.init(uuidString:))
            _ = try await ledger.simulator.advance(by: .seconds(25 * 3_600))
            await #expect(throws: (any Error).self) {
                _ = try await ledger.simulator.purchase(
                    appleId: "apple-o2", productId: Self.monthly, environment: .production, appAccountToken: token, offer: .promotionalOffer(redemption))
            }
            for bad: [String: Any] in [
                ["user_id": "o-bea", "product_id": Self.monthly, "kind": "promotional"],
                ["user_id": "o-bea", "product_id": Self.monthly, "kind": "coupon", "offer_id": "X"],
                ["user_id": "o-bea", "product_id": Self.monthly, "kind": "introductory_eligibility"],
                ["user_id": "o-bea", "product_id": "com.example.coins100", "kind": "promotional", "offer_id": "X"],
            ] {
                #expect(try await Self.sign(ledger, bad).status == 400, "\(bad)")
            }
            #expect(try await Self.sign(ledger, ["user_id": "o-bea", "product_id": "com.example.nothing", "kind": "promotional", "offer_id": "X"]).status == 404)
            let eligibility = try await Self.sign(ledger, [
                "user_id": "o-bea", "product_id": Self.monthly, "kind": "introductory_eligibility", "allow_introductory_offer": false, "transaction_id": "2000000000000001",
            ])
            #expect(eligibility.status == 201)
            #expect(eligibility.json["expires_at"] is NSNull)
            #expect(try await ledger.count("OfferSignatureIssued") == 2)
        }
    }
}
