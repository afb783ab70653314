import AppleSimulator
import Foundation
import Ledger
import Postgres
import Testing

/// Support's acts from the console's look-up (issue 26): a form with the session's CSRF token
/// and a reason, a confirmation page that asks nothing of Apple, a confirmed POST that acts once,
/// the act in the timeline. Finance sees no such forms, and its POSTs are refused.
@Suite("console: support extends a subscription and fixes an attribution")
struct ConsoleActsTests {
    static let note = "Outage of 3 March, ticket 7"

    /// The actor of the only event of `type`.
    static func actor(_ ledger: LedgerHarness, of type: String) async throws -> String {
        try await ledger.pool.withConnection { try $0.query("SELECT metadata->>'actor' FROM events WHERE event_type = \(type)")[0].decode(0) }
    }

    static func millis(_ text: String) -> Int64 {
        Int64((ISO8601DateFormatter.withFractions.date(from: text)?.timeIntervalSince1970 ?? 0) * 1_000)
    }

    @Test("support extends a subscription through a confirmation, once however often it is confirmed; Apple's refusal is shown; finance sees no form and is refused")
    func extendFromTheLookUp() async throws {
        try await LedgerHarness.with(policy: .transfer, askApple: true) { ledger in
            let (_, monthly) = try await ledger.orderAndBuy(user: "c-bob", product: "com.example.pro.monthly", appleId: "apple-console-acts-1")
            #expect(try await ledger.submit(user: "c-bob", purchase: monthly).outcome == "delivered")
            let original = monthly.transaction.originalTransactionId
            // Apple extends no free trial (4030004): the first paid period first.
            _ = try await ledger.simulator.advance(days: 8)
            try await ledger.eventually("the paid period is recorded") { try await ledger.count("SubscriptionRenewalSeen") >= 1 }
            let expiresBefore = try #require(try await ledger.get("/v1/subscriptions/\(original)").json["expires_at"] as? String)

            let support = ConsoleClient(base: ledger.base)
            defer { Task { await support.shutdown() } }
            #expect(try await support.signIn(LedgerHarness.supportToken).status == 303)
            let page = try await support.get("/console/lookup?q=\(original)")
            #expect(page.status == 200)
            #expect(page.body.contains("id=\"extend-form\""))
            #expect(page.body.contains("id=\"token-form\""))
            #expect(page.body.contains("<option value=\"service_issue\">"))
            let csrf = try #require(ConsoleClient.hidden("csrf", in: page.body))

            let fields = [("original_transaction_id", original), ("days", "10"), ("reason", "service_issue"), ("note", Self.note)]
            // Without the session's CSRF token, or with another: refused, Apple not asked.
            #expect(try await support.postForm("/console/acts/extend", fields).status == 403)
            let forged = [("csrf", "forged")] + fields + [("confirm", "1"), ("request_id", UUID().uuidString)]
            #expect(try await support.postForm("/console/acts/extend", forged).status == 403)
            // Bad input is refused before any confirmation: days out of Apple's range, another reason, no note.
            for bad in [
                [("original_transaction_id", original), ("days", "0"), ("reason", "other"), ("note", Self.note)],
                [("original_transaction_id", original), ("days", "91"), ("reason", "other"), ("note", Self.note)],
                [("original_transaction_id", original), ("days", "10"), ("reason", "because"), ("note", Self.note)],
                [("original_transaction_id", original), ("days", "10"), ("reason", "other"), ("note", "  ")],
                [("original_transaction_id", original), ("days", "10"), ("reason", "other")],
            ] {
                #expect(try await support.postForm("/console/acts/extend", [("csrf", csrf)] + bad).status == 400, "\(bad)")
            }
            let unknown = [("csrf", csrf), ("original_transaction_id", "999999999"), ("days", "5"), ("reason", "other"), ("note", "x")]
            #expect(try await support.postForm("/console/acts/extend", unknown).status == 404)
            // What support typed is shown as text on the confirmation.
            let hostile = try await support.postForm(
                "/console/acts/extend", [("csrf", csrf), ("original_transaction_id", original), ("days", "3"), ("reason", "other"), ("note", "<script>alert(1)</script>")])
            #expect(hostile.status == 200)
            #expect(!hostile.body.contains("<script"))
            #expect(hostile.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))

            // The first POST only restates what will be asked, with a request id made once.
            let confirmation = try await support.postForm("/console/acts/extend", [("csrf", csrf)] + fields)
            #expect(confirmation.status == 200)
            #expect(confirmation.body.contains("Extend subscription \(original) by 10 days for reason service_issue?"))
            #expect(confirmation.body.contains(Self.note))
            #expect(ConsoleClient.hidden("confirm", in: confirmation.body) == "1")
            let requestId = try #require(ConsoleClient.hidden("request_id", in: confirmation.body))
            #expect(UUID(uuidString: requestId) != nil)
            #expect(ledger.simulator.renewalExtensions.isEmpty)
            #expect(try await ledger.count("SubscriptionRenewalExtended") == 0)

            // The confirmed POST acts.
            let confirmed = [("csrf", csrf)] + fields + [("request_id", requestId), ("confirm", "1")]
            let done = try await support.postForm("/console/acts/extend", confirmed)
            #expect(done.status == 200, "\(done.body)")
            #expect(done.body.contains("Apple extended subscription \(original) by 10 days"))
            #expect(ledger.simulator.renewalExtensions.count == 1)
            #expect(try await ledger.count("SubscriptionRenewalExtended") == 1)
            let expiresAfter = try #require(try await ledger.get("/v1/subscriptions/\(original)").json["expires_at"] as? String)
            #expect(Self.millis(expiresAfter) - Self.millis(expiresBefore) == 10 * 86_400_000, "\(expiresBefore) → \(expiresAfter)")
            #expect(try await Self.actor(ledger, of: "SubscriptionRenewalExtended").hasPrefix("console:api:"))

            // The same confirmation again (a double click, a reload): the first answer, Apple not asked again.
            let again = try await support.postForm("/console/acts/extend", confirmed)
            #expect(again.status == 200)
            #expect(again.body.contains("Apple extended subscription \(original) by 10 days"))
            #expect(ledger.simulator.renewalExtensions.count == 1)
            #expect(try await ledger.count("SubscriptionRenewalExtended") == 1)

            // The result links back to the look-up with the act's position, and that page,
            // waiting for the act only, shows it in the timeline.
            let back = try #require(done.body.firstMatch(of: /href="(\/console\/lookup\?[^"]*after=([0-9]+))"/), "\(done.body)")
            let actPosition: Int64 = try await ledger.pool.withConnection {
                try $0.query("SELECT max(position) FROM events WHERE event_type = 'SubscriptionRenewalExtended'")[0].decode(0)
            }
            #expect(Int64(back.output.2) == actPosition)
            let after = try await support.get(String(back.output.1).replacingOccurrences(of: "&amp;", with: "&"))
            #expect(after.status == 200)
            #expect(after.body.contains("Asked Apple to extend subscription \(original) by 10 days (service_issue, &quot;\(Self.note)&quot;, request \(requestId))"), "the act with support's note")

            // Apple allows two extensions a year: the third is refused, and the page says why.
            for (days, expected) in [("5", 200), ("4", 422)] {
                let asked = [("csrf", csrf), ("original_transaction_id", original), ("days", days), ("reason", "customer_satisfaction"), ("note", "goodwill")]
                let shown = try await support.postForm("/console/acts/extend", asked)
                let id = try #require(ConsoleClient.hidden("request_id", in: shown.body))
                let answer = try await support.postForm("/console/acts/extend", asked + [("request_id", id), ("confirm", "1")])
                #expect(answer.status == expected, "\(answer.body)")
                if expected == 422 {
                    #expect(answer.body.contains("Apple refused to extend \(original)"))
                    #expect(answer.body.contains("4030005"))
                    #expect(answer.body.contains("The refusal is recorded."))
                }
            }
            #expect(ledger.simulator.renewalExtensions.count == 2)
            #expect(try await ledger.count("SubscriptionRenewalExtended") == 3)

            // Finance sees the acts, never their forms, and its POSTs are refused.
            let finance = ConsoleClient(base: ledger.base)
            defer { Task { await finance.shutdown() } }
            #expect(try await finance.signIn(LedgerHarness.financeToken).status == 303)
            let seen = try await finance.get("/console/lookup?q=\(original)")
            #expect(seen.status == 200)
            #expect(seen.body.contains("Asked Apple to extend subscription \(original)"))
            #expect(!seen.body.contains("id=\"extend-form\""))
            #expect(!seen.body.contains("id=\"token-form\""))
            #expect(!seen.body.contains("/console/acts/"))
            let financeCsrf = try #require(ConsoleClient.hidden("csrf", in: seen.body))
            #expect(try await finance.postForm("/console/acts/extend", [("csrf", financeCsrf)] + fields).status == 403)
            let forbidden = try await finance.postForm("/console/acts/extend", [("csrf", financeCsrf)] + fields + [("request_id", UUID().uuidString), ("confirm", "1")])
            #expect(forbidden.status == 403)
            #expect(ledger.simulator.renewalExtensions.count == 2)
            #expect(try await ledger.count("SubscriptionRenewalExtended") == 3)
        }
    }

    @Test("support attaches a user's app account token through a confirmation; the purchase moves to that user, the act is in the timeline; finance is refused")
    func attachATokenFromTheLookUp() async throws {
        try await LedgerHarness.with(policy: .transfer, askApple: true) { ledger in
            // Alice paid for remove-ads before the app knew her: it went to the anonymous user
            // the app had then. Her order's token is the one to attach.
            let purchase = try await ledger.simulator.purchase(appleId: "apple-console-anon", productId: "com.example.removeads", environment: .production)
            #expect(try await ledger.submit(user: "c-anon", purchase: purchase).outcome == "delivered")
            let original = purchase.transaction.originalTransactionId
            let order = try await ledger.post("/v1/orders", ["user_id": "c-alice", "product_id": "com.example.coins100"])
            let token = try #require(order.json["app_account_token"] as? String).lowercased()

            let support = ConsoleClient(base: ledger.base)
            defer { Task { await support.shutdown() } }
            #expect(try await support.signIn(LedgerHarness.supportToken).status == 303)
            let page = try await support.get("/console/lookup?q=\(original)")
            #expect(page.status == 200)
            #expect(page.body.contains("id=\"token-form\""))
            #expect(!page.body.contains("id=\"extend-form\""), "remove-ads is no subscription")
            let csrf = try #require(ConsoleClient.hidden("csrf", in: page.body))

            let fields = [("original_transaction_id", original), ("app_account_token", token), ("reason", "ticket 42: paid before signing in")]
            #expect(try await support.postForm("/console/acts/app-account-token", fields).status == 403)
            #expect(try await support.postForm("/console/acts/app-account-token", [("csrf", "forged")] + fields + [("confirm", "1")]).status == 403)
            #expect(try await support.postForm("/console/acts/app-account-token", [("csrf", csrf), ("original_transaction_id", original), ("app_account_token", "not-a-uuid"), ("reason", "x")]).status == 400)
            #expect(try await support.postForm("/console/acts/app-account-token", [("csrf", csrf), ("original_transaction_id", original), ("app_account_token", token)]).status == 400)
            let unknown = try await support.postForm(
                "/console/acts/app-account-token", [("csrf", csrf), ("original_transaction_id", original), ("app_account_token", UUID().uuidString), ("reason", "x")])
            #expect(unknown.status == 422)
            #expect(unknown.body.contains("never issued"))
            #expect(try await support.postForm("/console/acts/app-account-token", [("csrf", csrf), ("original_transaction_id", "424242"), ("app_account_token", token), ("reason", "x")]).status == 404)

            // The first POST restates the request and its effect; nothing is asked or recorded.
            let confirmation = try await support.postForm("/console/acts/app-account-token", [("csrf", csrf)] + fields)
            #expect(confirmation.status == 200)
            #expect(confirmation.body.contains("Attach app account token \(token) (user c-alice&#39;s) to original transaction \(original) with Apple?"))
            #expect(confirmation.body.contains("The purchase moves from c-anon to c-alice"))
            #expect(ConsoleClient.hidden("confirm", in: confirmation.body) == "1")
            #expect(try await ledger.count("AppAccountTokenSet") == 0)
            #expect(try await ledger.get("/v1/ownership/\(original)").json["owner_user_id"] as? String == "c-anon")

            // Confirmed: Apple holds the token, and the purchase is Alice's.
            let done = try await support.postForm("/console/acts/app-account-token", [("csrf", csrf)] + fields + [("confirm", "1")])
            #expect(done.status == 200, "\(done.body)")
            #expect(done.body.contains("Apple holds app account token \(token) on \(original)"))
            #expect(try await ledger.get("/v1/ownership/\(original)").json["owner_user_id"] as? String == "c-alice")
            #expect(try await ledger.count("AppAccountTokenSet") == 1)
            #expect(try await Self.actor(ledger, of: "AppAccountTokenSet").hasPrefix("console:api:"))
            let acts = try await ledger.events("AppAccountTokenSet")
            guard case .appAccountTokenSet(let act)? = acts.first else { throw HarnessError("not recorded") }
            let (cAnon, cAlice) = (try await ledger.recorded("c-anon"), try await ledger.recorded("c-alice"))
            #expect(act.outcome == "set" && act.previousUserId == cAnon && act.userId == cAlice)
            #expect(try await ledger.server.service.people.open(try #require(act.reason)) == "ticket 42: paid before signing in")
            let signed = ledger.simulator.transactions(of: "apple-console-anon").first { $0.originalTransactionId == original }
            #expect(signed?.appAccountToken?.uuidString.lowercased() == token)

            // The result links back to the look-up with the act's position, and that page,
            // waiting for the act only, shows it in the timeline.
            let back = try #require(done.body.firstMatch(of: /href="(\/console\/lookup\?[^"]*after=([0-9]+))"/), "\(done.body)")
            let actPosition: Int64 = try await ledger.pool.withConnection {
                try $0.query("SELECT max(position) FROM events WHERE event_type = 'AppAccountTokenSet'")[0].decode(0)
            }
            #expect(try #require(Int64(back.output.2)) >= actPosition, "the act's events end at or after its AppAccountTokenSet")
            let after = try await support.get(String(back.output.1).replacingOccurrences(of: "&amp;", with: "&"))
            #expect(after.status == 200)
            #expect(after.body.contains("Attached app account token \(token) of user c-alice to \(original) with Apple"))

            // Finance: no form, and its POST is refused.
            let finance = ConsoleClient(base: ledger.base)
            defer { Task { await finance.shutdown() } }
            #expect(try await finance.signIn(LedgerHarness.financeToken).status == 303)
            let seen = try await finance.get("/console/lookup?q=\(original)")
            #expect(seen.status == 200)
            #expect(!seen.body.contains("id=\"token-form\""))
            let financeCsrf = try #require(ConsoleClient.hidden("csrf", in: seen.body))
            #expect(try await finance.postForm("/console/acts/app-account-token", [("csrf", financeCsrf)] + fields + [("confirm", "1")]).status == 403)
            #expect(try await ledger.count("AppAccountTokenSet") == 1)
        }
    }
}
