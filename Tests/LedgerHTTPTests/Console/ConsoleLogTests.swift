import Foundation
import LedgerHTTP
import Logging
import Testing

/// Every console page view is logged with its request id and the token's name; neither the
/// token typed at sign-in nor the session cookie ever is.
@Suite struct ConsoleLogTests {
    @Test func pageViewsAreLoggedWithoutSecrets() async throws {
        let capture = LogCapture()
        let logger = Logger(label: "tests.console-log") { label in
            var handler = CapturingLogHandler(label: label, capture: capture)
            handler.metadataProvider = RequestLogContext.metadataProvider
            return handler
        }
        var cookie = ""
        var pageRequestID = ""
        try await LedgerHarness.with(logger: logger) { ledger in
            let browser = ConsoleClient(base: ledger.base)
            defer { Task { await browser.shutdown() } }
            _ = try await browser.signIn(LedgerHarness.financeToken)
            cookie = try #require(browser.cookies["pl_console"])
            let page = try await browser.get("/console/lookup?q=nobody-at-all")
            #expect(page.status == 200)
            pageRequestID = try #require(page.header("X-Request-ID"))
            _ = try await browser.get("/console/subscriptions")
        }
        let lines = capture.lines
        let views = lines.filter { $0.contains("console page") }
        let view = try #require(views.first { $0.contains("path=/console/lookup") })
        #expect(view.contains("request_id=\(pageRequestID)"))
        #expect(view.contains("token=api:"))
        #expect(view.contains("role=finance"))
        #expect(views.contains { $0.contains("path=/console/subscriptions") })
        #expect(lines.contains { $0.contains("console sign-in") })
        for line in lines {
            #expect(!line.contains(LedgerHarness.financeToken), "the token was logged: \(line)")
            #expect(!line.contains(cookie), "the session cookie was logged: \(line)")
        }
    }
}
