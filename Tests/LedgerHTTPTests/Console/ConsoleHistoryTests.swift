import Foundation
import Ledger
import Testing

/// The finance-over-time pages: SVG charts with no script, each point and number linking to the
/// subscriptions it counts and each of those to its timeline, the cohort table shaded by
/// retention, hostile input escaped, and finance's pages closed to support.
@Suite struct ConsoleHistoryTests {
    static let start = Date(timeIntervalSince1970: 1_767_614_400)  // 2026-01-05T12:00:00Z

    @Test func chartsAndTablesLinkEachFigureToItsSubscriptions() async throws {
        try await LedgerHarness.with(appleStart: Self.start) { ledger in
            // Two trials that convert on 12 January, one of which leaves in March; a yearly plan
            // paid at once and refunded in February.
            var originals: [String: String] = [:]
            for (user, product) in [("hist-a", "com.example.pro.monthly"), ("hist-b", "com.example.pro.monthly"), ("hist-c", "com.example.pro.yearly")] {
                let (_, bought) = try await ledger.orderAndBuy(user: user, product: product, appleId: "apple-\(user)")
                #expect(try await ledger.submit(user: user, purchase: bought).status == 200)
                originals[user] = bought.transaction.originalTransactionId
            }
            // 14 February: both monthly plans renewed on the 12th; b turns auto-renew off (it
            // leaves on 12 March) and the yearly plan is refunded today.
            _ = try await ledger.simulator.advance(days: 40)
            try await ledger.simulator.setAutoRenew(originalTransactionId: originals["hist-b"]!, enabled: false)
            _ = try await ledger.simulator.refund(transactionId: originals["hist-c"]!)
            _ = try await ledger.simulator.advance(days: 30)
            try await ledger.eventually("every notification is recorded", within: .seconds(60)) {
                try await ledger.count("AppleNotificationReceived") == Int64(ledger.simulator.sentNotifications.filter { $0.version == .v2 }.count)
            }

            let browser = ConsoleClient(base: ledger.base)
            defer { Task { await browser.shutdown() } }
            _ = try await browser.signIn(LedgerHarness.financeToken)
            let range = "from=2026-01-01&to=2026-03-31&interval=month&environment=Production"
            let mrr = try await browser.get("/console/mrr?\(range)")
            #expect(mrr.status == 200, "\(mrr.body.prefix(500))")
            #expect(mrr.body.contains("<svg class=\"chart\""))
            #expect(!mrr.body.lowercased().contains("<script"))
            #expect(mrr.body.contains("id=\"definition-churned\""), "each figure's definition is beside it")
            // January's MRR: two monthly plans (4.99) and the yearly one (49.99 / 12 = 4.17).
            #expect(mrr.body.contains("14.15 USD"), "\(mrr.body)")

            // February's churned figure links to the subscriptions it counts, each to its timeline.
            let churnedHref = "/console/mrr?from=2026-01-01&amp;to=2026-03-31&amp;interval=month&amp;environment=Production&amp;bundle_id=&amp;product_id=&amp;figure=churned&amp;period=2026-03#list"
            #expect(mrr.body.contains(churnedHref), "\(mrr.body)")
            let churned = try await browser.get(churnedHref.replacingOccurrences(of: "&amp;", with: "&"))
            #expect(churned.status == 200)
            #expect(churned.body.contains("churned, 2026-03 (1)"), "\(churned.body)")
            #expect(churned.body.contains("/console/lookup?q=\(originals["hist-b"]!)&amp;as=transaction"))
            let refunded = try await browser.get("/console/mrr?\(range)&figure=churned&period=2026-02")
            #expect(refunded.body.contains("churned, 2026-02 (1)") && refunded.body.contains(originals["hist-c"]!), "\(refunded.body)")
            // A point of the MRR line links to the subscriptions behind it.
            #expect(mrr.body.contains("<a href=\"/console/mrr?from=2026-01-01&amp;to=2026-03-31&amp;interval=month&amp;environment=Production&amp;bundle_id=&amp;product_id=&amp;figure=mrr&amp;period=2026-01#list\"><circle"))

            let cohorts = try await browser.get("/console/cohorts?from=2026-01-01&to=2026-03-31")
            #expect(cohorts.status == 200)
            #expect(cohorts.body.contains("class=\"num shade-10\""), "a cohort's first month retains all of it: \(cohorts.body)")
            #expect(cohorts.body.contains(">3<br>"), "three customers first paid in January")

            let refunds = try await browser.get("/console/refunds?\(range)")
            #expect(refunds.status == 200)
            #expect(refunds.body.contains("<svg class=\"chart\""))
            #expect(refunds.body.contains("<td class=\"num\">0.5</td>"), "February: one refund, two sales: \(refunds.body)")

            let csv = try await browser.get("/console/mrr.csv?\(range)")
            #expect(csv.status == 200 && csv.body.hasPrefix("period,active,"))

            // Hostile input comes back escaped, never as markup.
            let hostile = try await browser.get("/console/mrr?\(range)&product_id=%3Cscript%3Ealert(1)%3C%2Fscript%3E")
            #expect(hostile.status == 200)
            #expect(!hostile.body.contains("<script>alert(1)"))
            #expect(hostile.body.contains("&lt;script&gt;alert(1)"))
            let bad = try await browser.get("/console/mrr?from=2026-13-01&to=2026-03-31")
            #expect(bad.status == 400)

            // Support never sees finance's pages.
            let support = ConsoleClient(base: ledger.base)
            defer { Task { await support.shutdown() } }
            _ = try await support.signIn(LedgerHarness.supportToken)
            for page in ["/console/mrr", "/console/mrr.csv", "/console/cohorts", "/console/refunds"] {
                #expect(try await support.get(page).status == 403, "\(page) to support")
            }
        }
    }
}
