import Foundation
import Synchronization
import Testing

@testable import AppStore

/// A transport that answers from a script and records what it was asked, so the client's routing
/// and retry rules are tested without a network (over-HTTP tests live with the AppleSimulator).
final class ScriptedTransport: VerifyReceiptTransport {
    enum Answer: Sendable {
        case body(Int, String)
        case failure(AppStoreError)
    }

    private let state: Mutex<(answers: [Answer], requests: [(url: String, body: Data)])>

    init(_ answers: [Answer]) {
        state = Mutex((answers, []))
    }

    var requests: [(url: String, body: Data)] { state.withLock { $0.requests } }

    func post(url: String, body: Data, timeout: Duration, maximumResponseBytes: Int) async throws(AppStoreError) -> (httpStatus: Int, body: Data) {
        let answer = state.withLock { state -> Answer in
            state.requests.append((url, body))
            return state.answers.isEmpty ? .body(500, "script exhausted") : state.answers.removeFirst()
        }
        switch answer {
        case .body(let status, let text): return (status, Data(text.utf8))
        case .failure(let error): throw error
        }
    }
}

@Suite("verifyReceipt client routing and retries")
struct VerifyReceiptClientTests {
    let configuration = VerifyReceiptConfiguration(
        productionURL: "http://prod.test/verifyReceipt", sandboxURL: "http://sandbox.test/verifyReceipt",
        sharedSecret: "s3cret", malformedReceiptRetries: 2, malformedReceiptRetryDelay: .zero)

    func client(_ answers: [ScriptedTransport.Answer]) -> (VerifyReceiptClient, ScriptedTransport) {
        let transport = ScriptedTransport(answers)
        return (VerifyReceiptClient(configuration: configuration, transport: transport), transport)
    }

    @Test("it POSTs receipt-data, password and exclude-old-transactions to production first")
    func requestBody() async throws {
        let (client, transport) = client([.body(200, #"{"status":0}"#)])
        let outcome = try await client.verify(receiptData: "MIIa/b+c=", excludeOldTransactions: true)
        #expect(outcome.verdict == .valid)
        #expect(transport.requests.map(\.url) == ["http://prod.test/verifyReceipt"])
        let sent = try JSONSerialization.jsonObject(with: transport.requests[0].body) as? [String: Any]
        #expect(sent?["receipt-data"] as? String == "MIIa/b+c=")
        #expect(sent?["password"] as? String == "s3cret")
        #expect(sent?["exclude-old-transactions"] as? Bool == true)
    }

    @Test("21007 from production is asked again at the sandbox, and both attempts are returned verbatim")
    func sandboxRouting() async throws {
        let sandboxBody = try String(decoding: Fixtures.data("verifyreceipt-ios7-subscription-trial-pending_renewal-monza.json"), as: UTF8.self)
        let (client, transport) = client([.body(200, #"{"status":21007}"#), .body(200, sandboxBody)])
        let outcome = try await client.verify(receiptData: "r")
        #expect(outcome.verdict == .valid)
        #expect(transport.requests.map(\.url) == ["http://prod.test/verifyReceipt", "http://sandbox.test/verifyReceipt"])
        #expect(outcome.attempts.map(\.endpoint) == [.production, .sandbox])
        #expect(outcome.attempts.map(\.status) == [.sandboxReceiptInProduction, .valid])
        #expect(outcome.attempts[0].body == Data(#"{"status":21007}"#.utf8))
        #expect(outcome.attempts[1].body == Data(sandboxBody.utf8))
        #expect(outcome.attempts.allSatisfy { $0.httpStatus == 200 && $0.failure == nil })
        #expect(outcome.endpoint == .sandbox)
        #expect(outcome.response?.bundleID == "com.example.app")
    }

    @Test("21008 from the sandbox is asked again at production")
    func productionRouting() async throws {
        let (client, transport) = client([.body(200, #"{"status":21008}"#), .body(200, #"{"status":0}"#)])
        let outcome = try await client.verify(receiptData: "r", startingAt: .sandbox)
        #expect(outcome.verdict == .valid)
        #expect(transport.requests.map(\.url) == ["http://sandbox.test/verifyReceipt", "http://prod.test/verifyReceipt"])
    }

    @Test("environments answering 21007 and 21008 forever end as permanent after the switch budget")
    func environmentLoop() async throws {
        let (client, transport) = client([
            .body(200, #"{"status":21007}"#), .body(200, #"{"status":21008}"#), .body(200, #"{"status":21007}"#),
        ])
        let outcome = try await client.verify(receiptData: "r")
        #expect(outcome.verdict == .permanent(.status(.sandboxReceiptInProduction)))
        #expect(transport.requests.count == 3)
    }

    @Test("21002 is asked again a bounded number of times, then it is permanent")
    func malformedRetries() async throws {
        let (client, transport) = client(Array(repeating: .body(200, #"{"status":21002}"#), count: 5))
        let outcome = try await client.verify(receiptData: "r")
        #expect(outcome.verdict == .permanent(.status(.malformedReceiptData)))
        #expect(transport.requests.count == 3)
        #expect(outcome.attempts.count == 3)
    }

    @Test("21002 followed by an answer is valid")
    func malformedThenValid() async throws {
        let (client, _) = client([.body(200, #"{"status":21002}"#), .body(200, #"{"status":0}"#)])
        #expect(try await client.verify(receiptData: "r").verdict == .valid)
    }

    @Test("statuses map to the verdict the ledger acts on", arguments: [
        (21005, VerificationOutcome.Verdict.retryLater(.status(.serverUnavailable))),
        (21009, .retryLater(.status(.internalDataAccessError))),
        (21000, .permanent(.status(.notPOST))),
        (21003, .permanent(.status(.notAuthenticated))),
        (21010, .permanent(.status(.accountNotFound))),
        (21004, .configurationAlarm(.status(.sharedSecretMismatch))),
        (21006, .expiredButDecoded),
        (21199, .permanent(.status(VerifyReceiptStatus(rawValue: 21199)))),
        (12345, .permanent(.status(VerifyReceiptStatus(rawValue: 12345)))),
    ])
    func statuses(status: Int, verdict: VerificationOutcome.Verdict) async throws {
        let (client, transport) = client([.body(200, #"{"status":\#(status)}"#)])
        let outcome = try await client.verify(receiptData: "r")
        #expect(outcome.verdict == verdict)
        #expect(transport.requests.count == 1)
    }

    @Test("21100-21199 with is-retryable true is retry later")
    func retryableInternal() async throws {
        let (client, _) = client([.body(200, #"{"status":21150,"is-retryable":true}"#)])
        #expect(try await client.verify(receiptData: "r").verdict == .retryLater(.status(VerifyReceiptStatus(rawValue: 21150))))
    }

    @Test("HTTP 503 is retry later with its body kept, HTTP 403 is a configuration alarm")
    func httpErrors() async throws {
        let (client, _) = client([.body(503, "busy")])
        let outcome = try await client.verify(receiptData: "r")
        guard case .retryLater(.error(let error)) = outcome.verdict else {
            Issue.record("expected retryLater, got \(outcome.verdict)")
            return
        }
        #expect(error.code == .unexpectedHTTPStatus && error.httpStatus == 503)
        #expect(outcome.attempts.first?.body == Data("busy".utf8))
        #expect(outcome.attempts.first?.httpStatus == 503)
        let (forbidden, _) = self.client([.body(403, "")])
        guard case .configurationAlarm = try await forbidden.verify(receiptData: "r").verdict else {
            Issue.record("expected configurationAlarm")
            return
        }
    }

    @Test("time-outs and connection failures are retry later, with an attempt that has no HTTP status")
    func transportFailures() async throws {
        for code in [AppStoreError.Code.timeout, .connectionFailed] {
            let (client, _) = client([.failure(AppStoreError(code, "scripted"))])
            let outcome = try await client.verify(receiptData: "r")
            #expect(outcome.verdict == .retryLater(.error(AppStoreError(code, "scripted"))))
            #expect(outcome.attempts.count == 1)
            #expect(outcome.attempts[0].httpStatus == nil)
            #expect(outcome.response == nil)
        }
    }

    @Test("a malformed 200 body is retry later, and the bytes are kept")
    func malformedBody() async throws {
        let (client, _) = client([.body(200, "<html>oops")])
        let outcome = try await client.verify(receiptData: "r")
        guard case .retryLater(.error(let error)) = outcome.verdict else {
            Issue.record("expected retryLater, got \(outcome.verdict)")
            return
        }
        #expect(error.code == .malformedBody)
        #expect(outcome.attempts[0].body == Data("<html>oops".utf8))
    }

    @Test("an empty receipt is refused before any request")
    func emptyReceipt() async {
        let (client, transport) = client([])
        await expectError(.invalidRequest) { _ = try await client.verify(receiptData: "") }
        #expect(transport.requests.isEmpty)
    }

    @Test("configuration reads the contract's variables and never prints the secret")
    func readsConfiguration() {
        let config = VerifyReceiptConfiguration(environment: [
            "APPLE_VERIFY_RECEIPT_PRODUCTION_URL": "http://127.0.0.1:9/p", "APPLE_SHARED_SECRET": "hush",
        ])
        #expect(config.productionURL == "http://127.0.0.1:9/p")
        #expect(config.sandboxURL == VerifyReceiptConfiguration.defaultSandboxURL)
        #expect(config.sharedSecret == "hush")
        #expect(!config.description.contains("hush"))
        #expect(VerifyReceiptConfiguration(environment: [:]).productionURL == "https://buy.itunes.apple.com/verifyReceipt")
    }
}

@Suite("verifyReceipt over AsyncHTTPClient")
struct HTTPTransportTests {
    @Test("a refused connection is retry later with one attempt and no HTTP status")
    func connectionRefused() async throws {
        // Port 9 (discard) on loopback is closed here; nothing listens, so the connect fails fast.
        let client = VerifyReceiptClient(configuration: VerifyReceiptConfiguration(
            productionURL: "http://127.0.0.1:9/verifyReceipt", timeout: .seconds(5)))
        let outcome = try await client.verify(receiptData: "r")
        guard case .retryLater(.error(let error)) = outcome.verdict else {
            Issue.record("expected retryLater, got \(outcome.verdict)")
            return
        }
        #expect(error.code == .connectionFailed || error.code == .timeout)
        #expect(outcome.attempts.count == 1 && outcome.attempts[0].httpStatus == nil)
    }
}
