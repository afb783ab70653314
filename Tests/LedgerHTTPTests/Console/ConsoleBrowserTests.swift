import Foundation
import Ledger
import LedgerQueries
import LedgerService
import Spawning
import TestSupport
import Testing

/// The console in a real browser (Debian's headless Chromium through chromedriver): sign in,
/// reach every page, find a transaction's timeline and its evidence, download the revenue CSV
/// and find it byte for byte equal to `audit revenue --format csv`, upload an App Store Connect
/// report and see its differences, support refused revenue, a form without its CSRF token
/// refused. Each page is saved as a screenshot under `.build/test-output/console/`.
@Suite("the console in headless Chromium", BrowserAvailability.required, .serialized)
struct ConsoleBrowserTests {
    /// Where the screenshots go: the build folder, never committed.
    static let output: URL = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/test-output/console")
    }()

    @Test func financeAndSupportAtTheirScreens() async throws {
        try FileManager.default.createDirectory(at: Self.output, withIntermediateDirectories: true)
        let downloads = FileManager.default.temporaryDirectory.appendingPathComponent("console-downloads-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: downloads) }
        try await LedgerHarness.with { ledger in
            // A small day of business: coins twice, remove-ads, a monthly subscription that
            // renews, and one coin purchase refunded.
            var transactions: [String] = []
            for (index, product) in ["com.example.coins100", "com.example.coins100", "com.example.removeads", "com.example.pro.monthly"].enumerated() {
                let (_, purchase) = try await ledger.orderAndBuy(user: "browser-u\(index % 3)", product: product, appleId: "apple-browser-\(index)")
                #expect(try await ledger.submit(user: "browser-u\(index % 3)", purchase: purchase).status == 200)
                transactions.append(purchase.transactionId)
            }
            let firstDay = PacificDay.of(ledger.simulator.nowMilliseconds)
            _ = try await ledger.simulator.refund(transactionId: transactions[1])
            try await ledger.eventually("the refund is recorded") { try await ledger.count("PurchaseRefunded") == 1 }
            _ = try await ledger.simulator.purchase(appleId: "apple-browser-lost", productId: "com.example.coins100", environment: .production)
            let utcDay = RevenueDay.of(ledger.simulator.nowMilliseconds)
            let from = min(firstDay, utcDay), to = max(firstDay, utcDay)
            let reportFile = downloads.appendingPathComponent("S_D_report.txt")
            try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
            try ledger.simulator.salesSummaryReport(day: firstDay).write(to: reportFile, atomically: true, encoding: .utf8)

            try await Browser.with(downloadDirectory: downloads.path) { browser in
                // Signed out, the console sends one to sign in.
                try await browser.go(ledger.base + "/console/")
                #expect(try await browser.currentURL().hasSuffix("/console/sign-in"))
                try await browser.screenshot(to: Self.output.appendingPathComponent("sign-in.png").path)
                try await browser.type("#token", LedgerHarness.financeToken)
                try await browser.click("#sign-in")
                try await browser.waitForHeading("Revenue")
                #expect(try await browser.currentURL().hasSuffix("/console/revenue"))
                let session = try #require(try await browser.cookie(named: "pl_console"))
                #expect(session.httpOnly)

                // Revenue, and its CSV: the very bytes `audit revenue --format csv` prints.
                try await browser.go(ledger.base + "/console/revenue?from=\(from)&to=\(to)&group_by=day&environment=Production")
                #expect(try await browser.exists("#revenue-table"))
                #expect(try await browser.exists("svg.chart"))
                try await browser.screenshot(to: Self.output.appendingPathComponent("revenue.png").path)
                try await browser.click("#download-csv")
                let downloaded = try await browser.waitForDownload(suffix: ".csv")
                let csv = try String(contentsOfFile: downloaded, encoding: .utf8)
                let cli = try await CLIRun.run(
                    ["audit", "revenue", "--from", from, "--to", to, "--group-by", "day", "--format", "csv"], databaseURL: ledger.conninfo)
                #expect(cli.status == 0, "\(cli.stderr)")
                #expect(csv == cli.stdout)
                #expect(csv.contains("USD"))

                // Subscriptions: the active figure leads to the list behind it.
                try await browser.go(ledger.base + "/console/subscriptions")
                #expect(try await browser.text("#figure-active .value") == "1")
                try await browser.screenshot(to: Self.output.appendingPathComponent("subscriptions.png").path)
                try await browser.click("#figure-active a")
                try await browser.waitFor("#subscription-list")
                #expect(try await browser.text("#subscription-list").contains(transactions[3]))

                // MRR over time: the chart's point leads to the subscriptions it counts, and its
                // CSV is the very bytes `report subscriptions --format csv` prints.
                try await browser.go(ledger.base + "/console/mrr?from=\(from)&to=\(to)&interval=day&environment=Production")
                #expect(try await browser.exists("svg.chart circle.mrr"))
                try await browser.screenshot(to: Self.output.appendingPathComponent("mrr.png").path)
                try await browser.click("#mrr-table tbody tr:last-child td:nth-child(2) a")
                try await browser.waitFor("#drill-list")
                #expect(try await browser.text("#drill-list").contains(transactions[3]))
                try await browser.click("#download-csv")
                let mrrCSV = try String(
                    contentsOfFile: try await browser.waitForDownload(suffix: "subscriptions-Production-\(from)-\(to)-by-day.csv"), encoding: .utf8)
                let reportCLI = try await CLIRun.run(
                    ["report", "subscriptions", "--from", from, "--to", to, "--interval", "day", "--format", "csv"], databaseURL: ledger.conninfo)
                #expect(reportCLI.status == 0, "\(reportCLI.stderr)")
                #expect(mrrCSV == reportCLI.stdout)

                // Look-up: a transaction's timeline, its chain verdict, and Apple's own body.
                try await browser.go(ledger.base + "/console/lookup")
                try await browser.type("#q", transactions[1])
                try await browser.click("#search")
                try await browser.waitFor("#chain")
                #expect(try await browser.text("#chain").contains("Chain verified"))
                let timeline = try await browser.text("#timeline")
                #expect(timeline.contains("PurchaseDelivered"))
                #expect(timeline.contains("PurchaseRefunded"))
                #expect(try await browser.text("#ownership").contains("browser-u1"))
                try await browser.screenshot(to: Self.output.appendingPathComponent("lookup-dispute.png").path)
                try await browser.click("a.evidence")
                try await browser.waitFor("#document-name")
                #expect(try await browser.text("#document-name").contains("the bytes match their name"))
                try await browser.screenshot(to: Self.output.appendingPathComponent("evidence.png").path)

                // Reconciliation: upload Apple's report; the sale the ledger never heard of shows.
                try await browser.go(ledger.base + "/console/reconciliation")
                try await browser.upload("#report", file: reportFile.path)
                try await browser.click("#upload")
                try await browser.waitFor("#summary")
                let afterUpload = try await browser.currentURL()
                #expect(afterUpload.contains("/console/reconciliation/"), "\(afterUpload)")
                let differences = try await browser.text("#differences")
                #expect(differences.contains("Apple counted 1 the ledger did not"))
                #expect(differences.contains(transactions[0]))
                try await browser.screenshot(to: Self.output.appendingPathComponent("reconciliation.png").path)

                // A form whose CSRF token was taken out is refused, and nothing changes.
                try await browser.go(ledger.base + "/console/reconciliation")
                _ = try await browser.execute("document.querySelectorAll('input[name=csrf]').forEach(e => e.remove())")
                try await browser.upload("#report", file: reportFile.path)
                try await browser.click("#upload")
                try await browser.waitForHeading("Form refused")
                #expect(try await ledger.count("AppStoreReportImported") == 1)

                // Sign out; support signs in and is kept from revenue.
                try await browser.go(ledger.base + "/console/lookup")
                try await browser.click("#sign-out")
                try await browser.waitForHeading("Sign in")
                #expect(try await browser.currentURL().hasSuffix("/console/sign-in"))
                try await browser.go(ledger.base + "/console/revenue")
                try await browser.waitForHeading("Sign in")
                try await browser.type("#token", LedgerHarness.supportToken)
                try await browser.click("#sign-in")
                try await browser.waitForHeading("Look-up")
                try await browser.go(ledger.base + "/console/revenue")
                try await browser.waitForHeading("Not for this role")
                #expect(!(try await browser.source()).contains("revenue-table"))
            }
        }
    }
}

extension Browser {
    /// Waits, with a deadline, until the page's heading is `text`: a click that submits a form
    /// may return before the next page is there.
    func waitForHeading(_ text: String, within limit: Duration = .seconds(15)) async throws {
        let deadline = ContinuousClock.now + limit
        while true {
            if (try? await self.text("h1")) == text { return }
            guard ContinuousClock.now < deadline else {
                let url = (try? await currentURL()) ?? "?"
                let main = (try? await self.text("main")) ?? "?"
                throw WebDriverError(code: "timeout", message: "heading never became \(text) on \(url): \(main.prefix(300))", command: "waitForHeading")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}

/// One run of the built `purchase-ledger` beside the test bundle.
struct CLIRun {
    var status: Int32
    var stdout: String
    var stderr: String

    static func run(_ arguments: [String], databaseURL: String) async throws -> CLIRun {
        var environment = ProcessInfo.processInfo.environment
        environment["DATABASE_URL"] = databaseURL
        environment["LOG_LEVEL"] = "warning"
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("out"), err = folder.appendingPathComponent("err")
        let child = try ChildProcess.start(
            ChildProcess.builtProduct("purchase-ledger").path, arguments, environment: environment,
            output: .files(standardOutput: out, standardError: err))
        let status = await child.waitForExit().status
        return CLIRun(
            status: status, stdout: String(decoding: try Data(contentsOf: out), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: err), as: UTF8.self))
    }
}
