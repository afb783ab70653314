import AppleSimulator
import Foundation
import Spawning
import Testing

/// `purchase-ledger extend-renewals` as an operator runs it, against the simulator standing in
/// for Apple (docs/cli.md): its output and exit codes, and a run cut off while
/// Apple is down followed again by the next run, not asked twice.
@Suite("purchase-ledger extend-renewals")
struct ExtendRenewalsCommandTests {
    @Test("a run Apple's outage cuts off fails, the next follows the same request to completion: exit 0, the counts printed, Apple asked for one")
    func resumed() async throws {
        try await LedgerHarness.with(askApple: true) { ledger in
            for index in 0..<4 {
                let (_, purchase) = try await ledger.orderAndBuy(user: "e-\(index)", product: MassExtensionTests.yearly, appleId: "apple-e\(index)")
                #expect(try await ledger.submit(user: "e-\(index)", purchase: purchase).outcome == "delivered")
            }
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("extend-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let key = folder.appendingPathComponent("AuthKey.p8")
            try Data(try #require(ledger.serverAPIKeyPEM).utf8).write(to: key)
            let environment = [
                "DATABASE_URL": ledger.conninfo, "APPLE_ISSUER_ID": LedgerHarness.issuerId, "APPLE_KEY_ID": LedgerHarness.keyId,
                "APPLE_PRIVATE_KEY": key.path, "APPLE_BUNDLE_ID": LedgerHarness.bundleId, "APPLE_SERVER_API_URL": ledger.apple.baseURL,
            ]
            let arguments = [
                "extend-renewals", "--product", MassExtensionTests.yearly, "--days", "5", "--reason", "service_issue",
                "--note", "outage of the 9th", "--poll-seconds", "1", "--timeout-seconds", "120",
            ]
            let success = ProcessExit(status: 0, signaled: false)

            ledger.simulator.failNextServerAPICalls(50, with: .serverError(status: 503), endpoint: .massExtendRenewalDate)
            let cut = try await LedgerProcess.run(arguments, environment: environment)
            #expect(cut.exit != success, "\(cut.output)")
            #expect(cut.output.contains("run again to send it again"), "\(cut.output)")
            #expect(ledger.simulator.massRenewalExtensions.isEmpty)
            ledger.simulator.clearServerAPIFailures()

            let again = try await LedgerProcess.run(arguments, environment: environment)
            #expect(again.exit == success, "\(again.output)")
            let requests = ledger.simulator.massRenewalExtensions.map(\.requestIdentifier)
            #expect(requests.count == 1, "Apple holds one request: \(requests)")
            let id = try #require(requests.first)
            #expect(again.output.contains("following request \(id), which an earlier run left unfinished"), "\(again.output)")
            #expect(again.output.contains("complete: 4 succeeded, 0 failed"), "\(again.output)")
            #expect(try await ledger.count("MassRenewalExtensionRequested") == 1)
            #expect(try await ledger.count("MassRenewalExtensionCompleted") == 1)
        }
    }
}
