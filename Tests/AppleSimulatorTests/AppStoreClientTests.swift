import AppStore
import AppleSimulator
import Foundation
import Testing

/// The AppStore module's real verifyReceipt client over real HTTP against the simulator.
@Suite("the AppStore client against the simulator")
struct AppStoreClientTests {
    static func client(
        _ running: RunningAppleSimulator, secret: String? = nil, timeout: Duration = .seconds(5)
    ) -> VerifyReceiptClient {
        VerifyReceiptClient(
            configuration: VerifyReceiptConfiguration(
                productionURL: running.productionURL, sandboxURL: running.sandboxURL, sharedSecret: secret,
                timeout: timeout, malformedReceiptRetries: 1, malformedReceiptRetryDelay: .milliseconds(10)))
    }

    @Test("a sandbox receipt is tried on production, then on sandbox after 21007")
    func routes21007() async throws {
        try await SimulatorHarness.withServer { running in
            let purchase = try await running.simulator.purchase(appleId: "s", productId: "com.example.removeads")
            let outcome = try await Self.client(running).verify(receiptData: purchase.receiptData)
            #expect(outcome.verdict == .valid)
            #expect(outcome.attempts.map(\.status) == [.sandboxReceiptInProduction, .valid])
            #expect(outcome.attempts.map(\.url) == [running.productionURL, running.sandboxURL])
            #expect(outcome.response?.receipt?.inApp.map(\.transactionID) == [purchase.transactionId])
        }
    }

    @Test("a production receipt sent to sandbox is sent on to production after 21008")
    func routes21008() async throws {
        try await SimulatorHarness.withServer { running in
            let purchase = try await running.simulator.purchase(
                appleId: "p", productId: "com.example.removeads", environment: .production)
            let outcome = try await Self.client(running).verify(receiptData: purchase.receiptData, startingAt: .sandbox)
            #expect(outcome.verdict == .valid)
            #expect(outcome.attempts.map(\.status) == [.productionReceiptInSandbox, .valid])
            #expect(outcome.response?.environment == .production)
        }
    }

    @Test("21005, 21009 and HTTP 500 are retry-later; 21003 is permanent; 21004 raises the alarm")
    func taxonomy() async throws {
        try await SimulatorHarness.withServer(SimulatorHarness.configuration(sharedSecret: "s3cret")) { running in
            let purchase = try await running.simulator.purchase(
                appleId: "t", productId: "com.example.removeads", environment: .production)
            let client = Self.client(running, secret: "s3cret")
            for mode in [FailureMode.status(21005), .status(21009), .httpStatus(500), .httpStatus(503)] {
                running.simulator.injectFailure(FailureRule(mode, .next(1)))
                let outcome = try await client.verify(receiptData: purchase.receiptData)
                guard case .retryLater = outcome.verdict else {
                    Issue.record("\(mode) gave \(outcome.verdict)")
                    continue
                }
            }
            let forged = Data("PLSIM1.production.1.00".utf8).base64EncodedString()
            let rejected = try await client.verify(receiptData: forged)
            #expect(rejected.verdict == .permanent(.status(.notAuthenticated)))
            let alarm = try await Self.client(running, secret: "wrong").verify(receiptData: purchase.receiptData)
            #expect(alarm.verdict == .configurationAlarm(.status(.sharedSecretMismatch)))
            #expect(try await client.verify(receiptData: purchase.receiptData).verdict == .valid)
        }
    }

    @Test("a slow answer is a time-out, retry-later; a malformed body too")
    func timeoutAndMalformed() async throws {
        try await SimulatorHarness.withServer { running in
            let purchase = try await running.simulator.purchase(
                appleId: "m", productId: "com.example.removeads", environment: .production)
            running.simulator.injectFailure(FailureRule(.delay(milliseconds: 1_500), .next(1)))
            let slow = try await Self.client(running, timeout: .milliseconds(300)).verify(receiptData: purchase.receiptData)
            guard case .retryLater(.error(let error)) = slow.verdict else {
                Issue.record("a time-out gave \(slow.verdict)")
                return
            }
            #expect(error.code == .timeout)
            running.simulator.injectFailure(FailureRule(.malformedBody, .next(1)))
            let malformed = try await Self.client(running).verify(receiptData: purchase.receiptData)
            guard case .retryLater = malformed.verdict else {
                Issue.record("a malformed body gave \(malformed.verdict)")
                return
            }
            #expect(malformed.attempts.first?.body.isEmpty == false)
        }
    }

    @Test("a subscription renewed twice, upgraded and refunded decodes to exactly what was simulated")
    func subscriptionDecodes() async throws {
        try await SimulatorHarness.withServer { running in
            let day = SimulatorHarness.dayMs, start = SimulatorHarness.startMs
            let scenario = try await Scenario.renewedTwiceUpgradedRefunded(running.simulator, appleId: "u")
            let first = scenario.first, upgrade = scenario.upgrade, simulated = scenario.transactions
            #expect(simulated.count == 4)

            let outcome = try await Self.client(running).verify(receiptData: upgrade.receiptData)
            #expect(outcome.verdict == .valid)
            let response = try #require(outcome.response)
            #expect(response.bundleID == "com.example.app")
            #expect(response.receipt?.inApp.map(\.transactionID) == [first.transactionId, upgrade.transactionId])
            let decoded = Dictionary(uniqueKeysWithValues: response.latestReceiptInfo.map { ($0.transactionID, $0) })
            #expect(decoded.count == simulated.count)
            for expected in simulated {
                let actual = try #require(decoded[expected.transactionId])
                #expect(actual.originalTransactionID == first.transactionId)
                #expect(actual.webOrderLineItemID == expected.webOrderLineItemId)
                #expect(actual.productID == expected.productId)
                #expect(actual.purchaseDate == expected.purchaseDateMs)
                #expect(actual.originalPurchaseDate == start)
                #expect(actual.expiresDate == expected.expiresDateMs)
                #expect(actual.cancellationDate == expected.cancellationDateMs)
                #expect(actual.cancellationReasonRaw == expected.cancellationReason.map { String($0) })
                #expect(actual.isTrialPeriod == expected.isTrialPeriod)
                #expect((actual.isUpgraded ?? false) == expected.isUpgraded)
                #expect(actual.subscriptionGroupIdentifier == "20654194")
            }
            #expect(decoded[simulated[2].transactionId]?.cancellationDate == start + 40 * day)
            #expect(decoded[upgrade.transactionId]?.cancellationDate == start + 42 * day)
            let renewal = try #require(response.pendingRenewalInfo.first)
            #expect(renewal.originalTransactionID == first.transactionId)
            #expect(renewal.autoRenewStatus == false)
            #expect(renewal.productID == "com.example.pro.yearly")
        }
    }
}
