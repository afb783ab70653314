import Foundation
import Ledger
import Testing

/// The console's doors: sign-in with a finance or support token only, a session cookie that
/// scripts and other sites cannot use, CSRF on every form, sign-out that ends the session for
/// good, and each role kept to its pages.
@Suite struct ConsoleSessionTests {
    @Test func signInSessionAndSignOut() async throws {
        try await LedgerHarness.with(secureCookies: true) { ledger in
            let browser = ConsoleClient(base: ledger.base)
            defer { Task { await browser.shutdown() } }
            // No session: every page leads to sign-in.
            let anonymous = try await browser.get("/console/revenue")
            #expect(anonymous.status == 303)
            #expect(anonymous.header("Location") == "/console/sign-in")

            // An app token has no screen; a wrong one neither. Neither gets a session.
            #expect(try await browser.signIn(LedgerHarness.appToken).status == 401)
            #expect(try await browser.signIn("not-a-token-at-all").status == 401)
            #expect(browser.cookies["pl_console"] == nil)

            // A sign-in posted without the form's own CSRF value is refused, even with a good token.
            _ = try await browser.get("/console/sign-in")
            let forged = try await browser.postForm("/console/sign-in", [("token", LedgerHarness.financeToken), ("csrf", "forged")])
            #expect(forged.status == 403)
            #expect(browser.cookies["pl_console"] == nil)

            let signedIn = try await browser.signIn(LedgerHarness.financeToken)
            #expect(signedIn.status == 303)
            #expect(signedIn.header("Location") == "/console/revenue")
            let cookie = try #require(signedIn.setCookies.first { $0.hasPrefix("pl_console=") })
            for attribute in ["HttpOnly", "SameSite=Strict", "Secure", "Path=/console", "Max-Age=28800"] {
                #expect(cookie.contains(attribute), "cookie lacks \(attribute): \(cookie)")
            }
            // The token never travels back, and the session row keeps only a digest of the cookie.
            #expect(!cookie.contains(LedgerHarness.financeToken))
            let stored = try await ledger.pool.withConnection { c in
                try c.query("SELECT count(*) FROM console_sessions WHERE id_sha256 = sha256(convert_to(\(browser.cookies["pl_console"]!), 'UTF8'))").first!.decode(0, as: Int64.self)
            }
            #expect(stored == 1)

            let revenue = try await browser.get("/console/revenue")
            #expect(revenue.status == 200)
            #expect(revenue.body.contains("<h1>Revenue</h1>"))
            #expect(revenue.header("Content-Security-Policy")?.contains("default-src 'none'") == true)
            #expect(revenue.header("Cache-Control") == "no-store")

            // Sign-out is a form too: without its CSRF token nothing happens.
            let csrf = try #require(ConsoleClient.hidden("csrf", in: revenue.body))
            #expect(try await browser.postForm("/console/sign-out", [("csrf", "wrong")]).status == 403)
            #expect(try await browser.get("/console/revenue").status == 200)
            let out = try await browser.postForm("/console/sign-out", [("csrf", csrf)])
            #expect(out.status == 303)
            #expect(out.header("Location") == "/console/sign-in")

            // The old cookie, replayed, no longer opens anything.
            let old = try #require(cookie.split(separator: ";").first.map { String($0.dropFirst("pl_console=".count)) })
            browser.setCookie("pl_console", old)
            #expect(try await browser.get("/console/revenue").status == 303)
        }
    }

    @Test func supportSeesPeopleNotRevenue() async throws {
        try await LedgerHarness.with { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "support-u1", product: "com.example.coins100", appleId: "apple-s1")
            #expect(try await ledger.submit(user: "support-u1", purchase: purchase).status == 200)
            let browser = ConsoleClient(base: ledger.base)
            defer { Task { await browser.shutdown() } }
            let signedIn = try await browser.signIn(LedgerHarness.supportToken)
            #expect(signedIn.header("Location") == "/console/lookup")
            for page in ["/console/revenue", "/console/revenue.csv", "/console/subscriptions", "/console/reconciliation"] {
                let refused = try await browser.get(page)
                #expect(refused.status == 403, "\(page) answered \(refused.status) to support")
                #expect(!refused.body.contains("0.99"))
            }
            let found = try await browser.get("/console/lookup?q=support-u1")
            #expect(found.status == 200)
            #expect(found.body.contains("Chain verified"))
            #expect(found.body.contains(purchase.transactionId))
            #expect(found.body.contains("coins"))
            // The navigation offers support only its own page.
            #expect(!found.body.contains("href=\"/console/revenue\""))

            // Apple's verbatim answer is one click away, pretty-printed.
            let link = try #require(found.body.range(of: "/console/documents/").map { found.body[$0.lowerBound...].prefix(19 + 64) })
            let document = try await browser.get(String(link))
            #expect(document.status == 200)
            #expect(document.body.contains("the bytes match their name"))
        }
    }

    @Test func financeSeesRevenueAsTheReportSaysIt() async throws {
        try await LedgerHarness.with { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "finance-u1", product: "com.example.removeads", appleId: "apple-f1")
            #expect(try await ledger.submit(user: "finance-u1", purchase: purchase).status == 200)
            let browser = ConsoleClient(base: ledger.base)
            defer { Task { await browser.shutdown() } }
            _ = try await browser.signIn(LedgerHarness.financeToken)
            let day = RevenueDay.of(ledger.simulator.nowMilliseconds)
            let page = try await browser.get("/console/revenue?from=\(day)&to=\(day)&group_by=product&environment=Production")
            #expect(page.status == 200)
            #expect(page.body.contains("com.example.removeads"))
            #expect(page.body.contains("2.99"))
            #expect(page.body.contains("<svg class=\"chart\""))
            let csv = try await browser.get("/console/revenue.csv?from=\(day)&to=\(day)&group_by=product&environment=Production")
            #expect(csv.status == 200)
            #expect(csv.header("Content-Disposition")?.hasPrefix("attachment;") == true)
            #expect(csv.body.hasPrefix(
                "product,currency,purchases,refunds,gross,refunded,net,commission,proceeds,tax,proceeds_estimated,bundle_id\r\ncom.example.removeads,USD,1,0,2.99,"))
            // Rows name their app; totals add every app's and name none.
            #expect(csv.body.components(separatedBy: "\r\n").filter { !$0.isEmpty }.dropFirst().allSatisfy {
                $0.hasSuffix(",0.00,true,\(LedgerHarness.bundleId)") || ($0.hasPrefix("total,") && $0.hasSuffix(",0.00,true,"))
            }, "\(csv.body)")
            #expect(page.body.contains("id=\"proceeds-estimated\""), "the page says the proceeds are estimated")
            let api = try await ledger.get("/v1/reports/revenue?from=\(day)&to=\(day)&group_by=product", token: LedgerHarness.financeToken)
            let json = try await browser.get("/console/revenue.json?from=\(day)&to=\(day)&group_by=product&environment=Production")
            let fromConsole = try JSONSerialization.jsonObject(with: Data(json.body.utf8)) as? NSDictionary
            #expect(fromConsole == (api.json as NSDictionary))
            // A bad date is the user's error, shown as a page, not a crash.
            let bad = try await browser.get("/console/revenue?from=2026-13-01&to=\(day)")
            #expect(bad.status == 400)
            #expect(bad.body.contains("from must be a date"))
        }
    }
}
