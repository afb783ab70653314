import Foundation
import LedgerQueries
import LedgerService
import Spawning
import TestSupport
import Testing

/// App Store Connect's report, written by the simulator from its own sales, uploaded through the
/// console: one sale Apple counted and the ledger never heard of, and one the ledger delivered
/// that Apple's report lacks, are both found, each with the transactions behind the ledger's side.
@Suite struct ConsoleReconciliationTests {
    @Test func uploadFindsWhatEachSideMissed() async throws {
        try await LedgerHarness.with { ledger in
            var delivered: [String] = []
            for (index, product) in ["com.example.coins100", "com.example.coins100", "com.example.removeads"].enumerated() {
                let (_, purchase) = try await ledger.orderAndBuy(user: "recon-u\(index)", product: product, appleId: "apple-recon-\(index)")
                #expect(try await ledger.submit(user: "recon-u\(index)", purchase: purchase).status == 200)
                delivered.append(purchase.transactionId)
            }
            // Paid at Apple, never submitted to the ledger (the app crashed before it could).
            _ = try await ledger.simulator.purchase(appleId: "apple-recon-lost", productId: "com.example.coins100", environment: .production)
            let day = PacificDay.of(ledger.simulator.nowMilliseconds)
            var report = try ledger.simulator.salesSummaryReport(day: day)
            // And Apple's report loses the remove-ads sale the ledger delivered.
            let lines = report.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.contains { $0.contains("com.example.removeads") })
            report = lines.filter { !$0.contains("com.example.removeads") }.joined(separator: "\n")

            let browser = ConsoleClient(base: ledger.base)
            defer { Task { await browser.shutdown() } }
            _ = try await browser.signIn(LedgerHarness.financeToken)
            let page = try await browser.get("/console/reconciliation")
            let csrf = try #require(ConsoleClient.hidden("csrf", in: page.body))

            // Without the form's CSRF token nothing is imported.
            let forged = try await browser.postFile(
                "/console/reconciliation", field: "report", fileName: "S_D_1.txt", bytes: Array(report.utf8), fields: [("csrf", "nope")])
            #expect(forged.status == 403)
            #expect(try await ledger.count("AppStoreReportImported") == 0)

            let uploaded = try await browser.postFile(
                "/console/reconciliation", field: "report", fileName: "S_D_1.txt", bytes: Array(report.utf8), fields: [("csrf", csrf)])
            #expect(uploaded.status == 303)
            let location = try #require(uploaded.header("Location"))
            #expect(location.hasPrefix("/console/reconciliation/"))
            let result = try await browser.get(location)
            #expect(result.status == 200)
            #expect(result.body.contains("<strong>2 differ</strong>"), "\(result.body)")
            #expect(result.body.contains("Apple counted 1 the ledger did not"))
            #expect(result.body.contains("the ledger counted 1 Apple did not"))
            // The remove-ads cell names the ledger's transaction Apple left out; the coins cell
            // names the two the ledger has, beside Apple's three.
            #expect(result.body.contains(">\(delivered[2])</a>"))
            #expect(result.body.contains(">\(delivered[0])</a>") && result.body.contains(">\(delivered[1])</a>"))

            // The same report gzipped, as downloaded, is the same content: recorded once.
            let gzipped = try await Self.gzip(Array(report.utf8))
            let again = try await browser.postFile(
                "/console/reconciliation", field: "report", fileName: "S_D_1.txt.gz", bytes: gzipped, fields: [("csrf", csrf)])
            #expect(again.header("Location") == location + "?again=1")
            #expect(try await ledger.count("AppStoreReportImported") == 1)

            // Not a report at all: a clear refusal, nothing recorded.
            let junk = try await browser.postFile(
                "/console/reconciliation", field: "report", fileName: "notes.txt", bytes: Array("hello\tworld\n".utf8), fields: [("csrf", csrf)])
            #expect(junk.status == 400)
            #expect(junk.body.contains("notes.txt"))
            #expect(try await ledger.count("AppStoreReportImported") == 1)

            // The list shows the import.
            #expect(try await browser.get("/console/reconciliation").body.contains("S_D_1.txt"))
        }
    }

    static func gzip(_ bytes: [UInt8]) async throws -> [UInt8] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gz-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("report.txt")
        try Data(bytes).write(to: file)
        let (exit, output) = try await ChildProcess.run("/bin/gzip", [file.path])
        struct GzipFailed: Error, CustomStringConvertible { var description: String }
        guard exit == .success else { throw GzipFailed(description: "gzip: \(exit) \(output)") }
        return Array(try Data(contentsOf: folder.appendingPathComponent("report.txt.gz")))
    }
}
