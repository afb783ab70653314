import AppStore
import AppleSimulator
import Foundation
import Testing

/// The AppStore module's real verifyReceipt client over real HTTP against the simulator.
@Suite("the AppStore client against the simulator")
struct AppStoreClientTests {
    @Test("a sandbox receipt is tried on production, then on sandbox after 21007")
    func routes21007() async throws {
        try await SimulatorHarness.withServer { running in
            let purchase = try await running.simulator.purchase(appleId: "s", productId: "com.example.removeads")
            let outcome = try await SimulatorHarness.client(running).verify(receiptData: purchase.receiptData)
            #expect(outcome.verdict == .valid)
            #expect(outcome.attempts.map(\.status) == [.sandboxReceiptInProduction, .valid])
            #expect(outcome.attempts.map(\.url) == [running.productionURL, running.sandboxURL])
            #expect(outcome.attempts.allSatisfy { $0.httpStatus == 200 && $0.failure == nil })
            #expect(outcome.endpoint == .sandbox)
            // Every attempt keeps Apple's bytes verbatim: the final one is the decoded response.
            #expect(try outcome.attempts.map { try VerifyReceiptResponse(jsonBytes: $0.body).status } == [
                .sandboxReceiptInProduction, .valid,
            ])
            #expect(outcome.response?.receipt?.inApp.map(\.transactionID) == [purchase.transactionId])
        }
    }

    @Test("a production receipt sent to sandbox is sent on to production after 21008")
    func routes21008() async throws {
        try await SimulatorHarness.withServer { running in
            let purchase = try await running.simulator.purchase(
                appleId: "p", productId: "com.example.removeads", environment: .production)
            let outcome = try await SimulatorHarness.client(running).verify(receiptData: purchase.receiptData, startingAt: .sandbox)
            #expect(outcome.verdict == .valid)
            #expect(outcome.attempts.map(\.status) == [.productionReceiptInSandbox, .valid])
            #expect(outcome.attempts.map(\.url) == [running.sandboxURL, running.productionURL])
            #expect(outcome.response?.environment == .production)
        }
    }

    @Test("a forged receipt is permanent (21003); a wrong shared secret raises the alarm (21004)")
    func rejections() async throws {
        try await SimulatorHarness.withServer(SimulatorHarness.configuration(sharedSecret: "s3cret")) { running in
            let purchase = try await running.simulator.purchase(
                appleId: "t", productId: "com.example.removeads", environment: .production)
            let client = SimulatorHarness.client(running, secret: "s3cret")
            let forged = Data("PLSIM1.production.1.00".utf8).base64EncodedString()
            let rejected = try await client.verify(receiptData: forged)
            #expect(rejected.verdict == .permanent(.status(.notAuthenticated)))
            let alarm = try await SimulatorHarness.client(running, secret: "wrong").verify(receiptData: purchase.receiptData)
            #expect(alarm.verdict == .configurationAlarm(.status(.sharedSecretMismatch)))
            #expect(try await client.verify(receiptData: purchase.receiptData).verdict == .valid)
        }
    }

    @Test("a subscription renewed twice, upgraded and refunded decodes to exactly what was simulated")
    func subscriptionDecodes() async throws {
        try await SimulatorHarness.withServer { running in
            let day = SimulatorHarness.dayMs, start = SimulatorHarness.startMs
            let scenario = try await Scenario.renewedTwiceUpgradedRefunded(running.simulator, appleId: "u")
            let first = scenario.first, upgrade = scenario.upgrade, simulated = scenario.transactions
            #expect(simulated.count == 4)

            let outcome = try await SimulatorHarness.client(running).verify(receiptData: upgrade.receiptData)
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
