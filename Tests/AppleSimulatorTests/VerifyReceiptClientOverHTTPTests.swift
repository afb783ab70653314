import AppStore
import AppStoreClient
import AppleSimulator
import Foundation
import TestSupport
import Testing

/// The verifyReceipt client's own rules (request body, environment switches, 21002 retries, the
/// verdict of every status, HTTP errors, time-outs, refused connections, malformed bodies), run by
/// the real client over real HTTP against the simulator. Apple's answers the simulator does not
/// give by itself are injected as failures (`FailureRule`), so each test is one or two loopback
/// requests.
@Suite("the verifyReceipt client's rules over HTTP")
struct VerifyReceiptClientOverHTTPTests {
    /// The receipt of a one-off production purchase: production answers it with 0 by itself.
    static func productionReceipt(_ simulator: AppleSimulator) async throws -> String {
        try await simulator.purchase(appleId: "c", productId: "com.example.removeads", environment: .production).receiptData
    }

    /// Verifies a production receipt once, after injecting `failure` for the next call.
    static func verify(injecting failure: FailureMode?, timeout: Duration = .seconds(20)) async throws -> VerificationOutcome {
        try await SimulatorHarness.withServer { running in
            let receipt = try await productionReceipt(running.simulator)
            if let failure { running.simulator.injectFailure(FailureRule(failure, .next(1))) }
            return try await SimulatorHarness.client(running, timeout: timeout).verify(receiptData: receipt)
        }
    }

    @Test("it POSTs receipt-data, password and exclude-old-transactions, to production first")
    func requestBody() async throws {
        try await SimulatorHarness.withServer(SimulatorHarness.configuration(sharedSecret: "s3cret")) { running in
            let simulator = running.simulator
            let purchase = try await simulator.purchase(
                appleId: "b", productId: "com.example.pro.monthly", environment: .production)
            try await simulator.advance(days: 40)  // the trial, then renewals on days 7 and 38
            let client = SimulatorHarness.client(running, secret: "s3cret")
            let all = try await client.verify(receiptData: purchase.receiptData)
            let latest = try await client.verify(receiptData: purchase.receiptData, excludeOldTransactions: true)
            // password: the simulator has a shared secret, so without it the answer is 21004.
            #expect(all.verdict == .valid)
            #expect(latest.verdict == .valid)
            // receipt-data: the receipt's own transaction comes back.
            #expect(all.response?.receipt?.inApp.map(\.transactionID) == [purchase.transactionId])
            // exclude-old-transactions: false lists every period, true only the latest renewal.
            #expect(all.response?.latestReceiptInfo.count == 3)
            let current = try simulator.subscription(purchase.transactionId).latestTransactionId
            #expect(latest.response?.latestReceiptInfo.map(\.transactionID) == [current])
            // Production first, and nowhere else for a production receipt.
            #expect((all.attempts + latest.attempts).map(\.url) == [running.productionURL, running.productionURL])
            #expect(simulator.verifyReceiptCalls == [.production: 2])
        }
    }

    @Test("environments answering 21007 and 21008 forever end as permanent after the switch budget")
    func environmentLoop() async throws {
        try await SimulatorHarness.withServer { running in
            let receipt = try await Self.productionReceipt(running.simulator)
            running.simulator.injectFailure(FailureRule(.status(21007), .next(10), endpoint: .production))
            running.simulator.injectFailure(FailureRule(.status(21008), .next(10), endpoint: .sandbox))
            let client = SimulatorHarness.client(running)
            #expect(client.configuration.maximumEnvironmentSwitches == 2)
            let outcome = try await client.verify(receiptData: receipt)
            #expect(outcome.verdict == .permanent(.status(.sandboxReceiptInProduction)))
            #expect(outcome.attempts.map(\.endpoint) == [.production, .sandbox, .production])
            #expect(outcome.attempts.map(\.status) == [
                .sandboxReceiptInProduction, .productionReceiptInSandbox, .sandboxReceiptInProduction,
            ])
            #expect(running.simulator.verifyReceiptCalls == [.production: 2, .sandbox: 1])
        }
    }

    @Test("21002 is asked again a bounded number of times, then it is permanent")
    func malformedReceiptRetries() async throws {
        try await SimulatorHarness.withServer { running in
            // Not base64: the simulator answers 21002 every time, as Apple does.
            let outcome = try await SimulatorHarness.client(running, malformedReceiptRetries: 2)
                .verify(receiptData: "%%% not base64 %%%")
            #expect(outcome.verdict == .permanent(.status(.malformedReceiptData)))
            #expect(outcome.attempts.map(\.status) == Array(repeating: .malformedReceiptData, count: 3))
            #expect(running.simulator.verifyReceiptCalls == [.production: 3])
        }
    }

    @Test("21002 followed by an answer is valid")
    func malformedReceiptThenValid() async throws {
        let outcome = try await Self.verify(injecting: .status(21002))
        #expect(outcome.verdict == .valid)
        #expect(outcome.attempts.map(\.status) == [.malformedReceiptData, .valid])
        #expect(outcome.response?.receipt?.inApp.count == 1)
    }

    @Test("each status maps to the verdict the ledger acts on, after one request", arguments: [
        (0, VerificationOutcome.Verdict.valid),
        (21000, .permanent(.status(.notPOST))),
        (21003, .permanent(.status(.notAuthenticated))),
        (21004, .configurationAlarm(.status(.sharedSecretMismatch))),
        (21005, .retryLater(.status(.serverUnavailable))),
        (21006, .expiredButDecoded),
        (21009, .retryLater(.status(.internalDataAccessError))),
        (21010, .permanent(.status(.accountNotFound))),
        (21100, .retryLater(.status(VerifyReceiptStatus(rawValue: 21100)))),
        (21199, .retryLater(.status(VerifyReceiptStatus(rawValue: 21199)))),
        (12345, .permanent(.status(VerifyReceiptStatus(rawValue: 12345)))),
    ])
    func verdicts(status: Int, verdict: VerificationOutcome.Verdict) async throws {
        // 0 is the simulator's own answer; the others are injected, 21100-21199 with is-retryable.
        let outcome = try await Self.verify(injecting: status == 0 ? nil : .status(status))
        #expect(outcome.verdict == verdict)
        #expect(outcome.attempts.count == 1)
        #expect(outcome.attempts.first?.httpStatus == 200)
        #expect(outcome.attempts.first?.status?.rawValue == status)
        #expect(outcome.response?.isRetryable == ((21100...21199).contains(status) ? true : nil))
    }

    @Test("HTTP 5xx and 429 are retry later, other HTTP errors raise the alarm; the attempt keeps the HTTP status",
          arguments: [(500, true), (503, true), (429, true), (403, false), (404, false)])
    func httpErrors(code: Int, retryable: Bool) async throws {
        let outcome = try await Self.verify(injecting: .httpStatus(code))
        #expect(outcome.verdict.kind == (retryable ? .retryLater : .configurationAlarm))
        #expect(outcome.verdict.error?.code == .unexpectedHTTPStatus)
        #expect(outcome.verdict.error?.httpStatus == code)
        #expect(outcome.attempts.count == 1)
        #expect(outcome.attempts.first?.httpStatus == code)
        #expect(outcome.attempts.first?.body.isEmpty == true)
        #expect(outcome.response == nil)
    }

    @Test("an answer slower than the client's time-out is retry later, with an attempt that has no HTTP status")
    func timeout() async throws {
        let outcome = try await Self.verify(injecting: .delay(milliseconds: 1_000), timeout: .milliseconds(250))
        #expect(outcome.verdict.kind == .retryLater)
        #expect(outcome.verdict.error?.code == .timeout)
        #expect(outcome.attempts.count == 1)
        #expect(outcome.attempts.first?.httpStatus == nil)
        #expect(outcome.attempts.first?.body.isEmpty == true)
        #expect(outcome.response == nil)
    }

    @Test("a refused connection is retry later, with an attempt that has no HTTP status")
    func connectionRefused() async throws {
        let outcome = try await LoopbackPort.refusing { port in
            let url = "http://127.0.0.1:\(port)/production/verifyReceipt"
            return try await VerifyReceiptClient(configuration: VerifyReceiptConfiguration(
                productionURL: url, sandboxURL: url, timeout: .milliseconds(500)), clock: .system).verify(receiptData: "r")
        }
        #expect(outcome.verdict.kind == .retryLater)
        #expect(outcome.verdict.error?.code == .connectionFailed)
        #expect(outcome.attempts.count == 1)
        #expect(outcome.attempts.first?.httpStatus == nil)
        #expect(outcome.response == nil)
    }

    @Test("a 200 body that is not JSON is retry later, and its bytes are kept")
    func malformedBody() async throws {
        let outcome = try await Self.verify(injecting: .malformedBody)
        #expect(outcome.verdict.kind == .retryLater)
        #expect(outcome.verdict.error?.code == .malformedBody)
        #expect(outcome.attempts.count == 1)
        #expect(outcome.attempts.first?.httpStatus == 200)
        #expect(outcome.attempts.first?.status == nil)
        #expect(outcome.attempts.first.map { String(decoding: $0.body, as: UTF8.self) }?.hasPrefix(#"{"status":0"#) == true)
        #expect(outcome.response == nil)
    }

    @Test("an empty receipt is refused before any request")
    func emptyReceipt() async throws {
        try await SimulatorHarness.withServer { running in
            let error = await #expect(throws: AppStoreError.self) {
                try await SimulatorHarness.client(running).verify(receiptData: "")
            }
            #expect(error?.code == .invalidRequest)
            #expect(running.simulator.verifyReceiptCalls.isEmpty)
        }
    }
}

extension VerificationOutcome.Verdict {
    /// A verdict without its cause, to assert on when the cause is an error with free text.
    enum Kind: Hashable {
        case valid, expiredButDecoded, retryLater, permanent, configurationAlarm
    }

    var kind: Kind {
        switch self {
        case .valid: .valid
        case .expiredButDecoded: .expiredButDecoded
        case .retryLater: .retryLater
        case .permanent: .permanent
        case .configurationAlarm: .configurationAlarm
        }
    }

    /// The error behind the verdict, when its cause is one rather than a status.
    var error: AppStoreError? {
        switch self {
        case .retryLater(.error(let error)), .permanent(.error(let error)), .configurationAlarm(.error(let error)): error
        default: nil
        }
    }
}
