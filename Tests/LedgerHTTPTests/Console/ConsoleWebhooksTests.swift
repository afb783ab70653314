import Foundation
import Testing

/// The webhooks page (docs/webhooks.md: a failing endpoint shows its backlog and last error
/// on a console page for finance): empty until an endpoint has run, then a row per endpoint with
/// what the endpoint's row says, as text; support is refused it as the other finance pages.
@Suite struct ConsoleWebhooksTests {
    @Test func financeSeesEachEndpointAndItsLastError() async throws {
        try await LedgerHarness.with { ledger in
            let browser = ConsoleClient(base: ledger.base)
            defer { Task { await browser.shutdown() } }
            _ = try await browser.signIn(LedgerHarness.financeToken)

            // No LEDGER_WEBHOOKS in the harness: no endpoint has run.
            let empty = try await browser.get("/console/webhooks")
            #expect(empty.status == 200)
            #expect(empty.body.contains("No webhook endpoint has run on this database yet"), "\(empty.body)")
            #expect(!empty.body.contains("id=\"webhook-endpoints\""))
            #expect(empty.body.contains("href=\"/console/webhooks\" class=\"current\""), "the tab is in the navigation, current")

            // An endpoint as a deliverer leaves it after a refusal.
            try await ledger.pool.withConnection { connection in
                _ = try connection.execute("""
                    INSERT INTO webhook_endpoints (name, url, last_error, last_error_at, delivered)
                    VALUES ('orders', 'http://127.0.0.1:9/hook', 'HTTP 500', now(), 3)
                    """)
            }
            let page = try await browser.get("/console/webhooks")
            #expect(page.status == 200)
            #expect(!page.body.contains("No webhook endpoint has run"))
            #expect(page.body.contains("<td>orders</td>"), "\(page.body)")
            #expect(page.body.contains("<td>http://127.0.0.1:9/hook</td>"))
            #expect(page.body.contains("<span class=\"error\">HTTP 500</span>"))
            #expect(page.body.contains("<td class=\"num\">3</td>"), "delivered")
            #expect(page.body.contains("Backlog:"))

            // What an endpoint's URL and a receiver's error hold is shown as text, never markup.
            let url = "http://127.0.0.1:9/hook?a=1&b=<2>", error = "HTTP 502: <b>\"bad\" gateway</b> 'x'"
            try await ledger.pool.withConnection { connection in
                _ = try connection.execute("UPDATE webhook_endpoints SET url = \(url), last_error = \(error) WHERE name = 'orders'")
            }
            let escaped = try await browser.get("/console/webhooks")
            #expect(escaped.status == 200)
            #expect(escaped.body.contains("<td>http://127.0.0.1:9/hook?a=1&amp;b=&lt;2&gt;</td>"), "\(escaped.body)")
            #expect(escaped.body.contains("HTTP 502: &lt;b&gt;&quot;bad&quot; gateway&lt;/b&gt; &#39;x&#39;"))
            #expect(!escaped.body.contains("<b>"))
            #expect(!escaped.body.contains("b=<2>"))

            // `/metrics` reports the same endpoint, read at the scrape.
            let metrics = try await browser.get("/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.body.contains("ledger_webhook_delivered_total{endpoint=\"orders\"} 3\n"), "\(metrics.body)")
            #expect(metrics.body.contains("ledger_webhook_last_error_timestamp_seconds{endpoint=\"orders\"} "))
        }
    }

    @Test func supportIsRefusedTheWebhooksPage() async throws {
        try await LedgerHarness.with { ledger in
            try await ledger.pool.withConnection { connection in
                _ = try connection.execute("""
                    INSERT INTO webhook_endpoints (name, url, last_error, last_error_at, delivered)
                    VALUES ('orders', 'http://127.0.0.1:9/hook', 'HTTP 500', now(), 3)
                    """)
            }
            let browser = ConsoleClient(base: ledger.base)
            defer { Task { await browser.shutdown() } }
            let signedIn = try await browser.signIn(LedgerHarness.supportToken)
            #expect(signedIn.header("Location") == "/console/lookup")
            let refused = try await browser.get("/console/webhooks")
            #expect(refused.status == 403)
            #expect(refused.body.contains("Not for this role"))
            #expect(!refused.body.contains("127.0.0.1:9/hook"))
            #expect(!refused.body.contains("HTTP 500"))
            // The navigation does not offer it to support.
            let lookup = try await browser.get("/console/lookup")
            #expect(lookup.status == 200)
            #expect(!lookup.body.contains("href=\"/console/webhooks\""))
        }
    }
}
