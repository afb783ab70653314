import AppStore
import AppleSimulator
import EventStore
import Foundation
import Ledger
import LedgerHTTP
import LedgerService
import Logging
import NIOHTTP1
import Synchronization
import TestSupport
import Testing
import X509

@Suite("The ledger's logs keep no secret")
struct LogHygieneTests {
    static let sharedSecret = "s3cret-shared-0123"

    @Test("The log lines of the whole run hold no receipt data, no token and no shared secret")
    func noSecretsInLogs() async throws {
        let capture = LogCapture()
        // Not LoggingSystem.bootstrap: tests run in parallel in one process, so this server gets
        // a logger of its own that keeps every line, at trace, in `capture`.
        // With the provider `serve` installs, which adds the request id to lines written for a request.
        let logger = Logger(label: "tests.log-hygiene") { label in
            var handler = CapturingLogHandler(label: label, capture: capture)
            handler.metadataProvider = RequestLogContext.metadataProvider
            return handler
        }
        let wrongToken = "wrong-token-abcdef0123456789"
        let callerRequestID = "log-hygiene-0001"
        var requestIDs: [String] = []
        var receipts: [String] = []
        var signedTransactions: [String] = []
        var deliveredRequestID: String?

        try await LedgerHarness.with(sharedSecret: Self.sharedSecret, logger: logger) { ledger in
            func seen(_ answer: LedgerHarness.Answer) {
                if let id = answer.header("X-Request-ID") { requestIDs.append(id) }
            }

            // An order, a receipt delivered, then resubmitted: already_delivered.
            let (_, first) = try await ledger.orderAndBuy(user: "u1", product: "com.example.coins100", appleId: "apple-1")
            receipts.append(first.receiptData)
            let delivered = try await ledger.submit(user: "u1", purchase: first)
            seen(delivered)
            deliveredRequestID = delivered.header("X-Request-ID")
            #expect(delivered.outcome == "delivered")
            let again = try await ledger.submit(user: "u1", purchase: first)
            seen(again)
            #expect(again.outcome == "already_delivered")

            // Apple unavailable once: pending, then the worker delivers it.
            let (_, second) = try await ledger.orderAndBuy(user: "u2", product: "com.example.coins100", appleId: "apple-2")
            receipts.append(second.receiptData)
            ledger.simulator.injectFailure(FailureRule(.status(21005), .next(1)))
            let pending = try await ledger.submit(user: "u2", purchase: second)
            seen(pending)
            #expect(pending.status == 202)
            #expect(pending.outcome == "pending")
            try await ledger.eventually("the worker delivered the pending receipt") { try await ledger.count("PurchaseDelivered") == 2 }

            // A call with a token that is not configured, and one with the finance token.
            let refused = try await ledger.get("/v1/users/u1", token: wrongToken)
            seen(refused)
            #expect(refused.status == 401)
            let finance = try await ledger.get("/v1/users/u1", token: LedgerHarness.financeToken)
            seen(finance)
            #expect(finance.status == 200)

            // A StoreKit 2 signed transaction.
            let (_, third) = try await ledger.orderAndBuy(user: "u3", product: "com.example.coins100", appleId: "apple-3")
            signedTransactions.append(third.signedTransaction)
            let signed = try await ledger.post("/v1/transactions", ["user_id": "u3", "signed_transaction": third.signedTransaction])
            seen(signed)
            #expect(signed.status == 200)
            #expect(signed.outcome == "delivered")

            // A v1 notification, authenticated by the shared secret in its body.
            let v1 = #"{"notification_type":"DID_RENEW","password":"\#(Self.sharedSecret)","environment":"PROD","bid":"com.example.app"}"#
            let notification = try await ledger.request(.POST, "/v1/notifications/apple", body: v1, token: nil)
            seen(notification)
            #expect(notification.status == 200)

            // A request id the caller chose.
            let health = try await ledger.request(.GET, "/healthz", token: nil, headers: [("X-Request-ID", callerRequestID)])
            seen(health)
            #expect(health.header("X-Request-ID") == callerRequestID)
        }

        let lines = capture.lines
        #expect(!lines.isEmpty, "the server logged nothing at trace: the capture does not work")
        let text = lines.joined(separator: "\n")

        #expect(!requestIDs.isEmpty)
        #expect(requestIDs.contains(callerRequestID))
        for id in requestIDs {
            #expect(text.contains(id), "request id \(id) is in no log line")
        }
        // Lines written on a request's behalf outside its handler carry its id too.
        let verifyLine = deliveredRequestID.flatMap { id in lines.first { $0.contains("verifyReceipt attempt") && $0.contains(id) } }
        #expect(verifyLine != nil, "the verifyReceipt attempt of request \(deliveredRequestID ?? "none") does not name it")

        var forbidden: [(what: String, value: String)] = [
            ("the app token", LedgerHarness.appToken),
            ("the finance token", LedgerHarness.financeToken),
            ("a refused token", wrongToken),
            ("the shared secret", Self.sharedSecret),
        ]
        for (index, receipt) in receipts.enumerated() {
            forbidden.append(("receipt_data \(index)", receipt))
            forbidden.append(("40 characters from the middle of receipt_data \(index)", String(receipt.dropFirst(receipt.count / 2).prefix(40))))
            forbidden.append(("40 characters from the start of receipt_data \(index)", String(receipt.prefix(40))))
            if let decoded = Data(base64Encoded: receipt).flatMap({ String(data: $0, encoding: .utf8) }) {
                forbidden.append(("receipt_data \(index), decoded", decoded))
            }
        }
        for (index, jws) in signedTransactions.enumerated() {
            forbidden.append(("signed_transaction \(index)", jws))
            let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
            if parts.count == 3 {
                forbidden.append(("the payload of signed_transaction \(index)", String(parts[1])))
                forbidden.append(("the signature of signed_transaction \(index)", String(parts[2])))
            }
        }
        #expect(forbidden.allSatisfy { $0.value.count >= 16 }, "a value checked is too short to mean anything")
        for (what, value) in forbidden {
            let offending = lines.first { $0.contains(value) }
            #expect(offending == nil, "a log line holds \(what): \(offending.map { String($0.prefix(400)) } ?? "")")
        }
    }
}

extension LogHygieneTests {
    @Test("Asking Apple logs neither the .p8 key nor a JWT, through 401, 429 and 5xx answers")
    func noKeyOrTokenInLogs() async throws {
        let capture = LogCapture()
        let logger = Logger(label: "tests.log-hygiene.apple") { label in CapturingLogHandler(label: label, capture: capture) }
        var key: String?
        try await LedgerHarness.with(logger: logger, askApple: true) { ledger in
            key = ledger.serverAPIKeyPEM
            let (_, purchase) = try await ledger.orderAndBuy(user: "u-key", product: "com.example.coins100", appleId: "apple-key")
            #expect(try await ledger.submit(user: "u-key", purchase: purchase).outcome == "delivered")
            ledger.simulator.failNextServerAPICalls(1, with: .unauthorized)
            _ = try await ledger.get("/v1/apple-orders/\(purchase.orderId)", token: LedgerHarness.supportToken)
            ledger.simulator.failNextServerAPICalls(1, with: .rateLimited(retryAfterSeconds: 1))
            ledger.simulator.failNextServerAPICalls(1, with: .serverError(status: 503))
            #expect(try await ledger.get("/v1/apple-orders/\(purchase.orderId)", token: LedgerHarness.supportToken).status == 200)
            _ = try await AskingAppleTests.reconciler(ledger).run()
        }
        let lines = capture.lines
        #expect(lines.contains { $0.contains("refused our credentials") }, "the 401 alarm is logged")
        let pem = try #require(key)
        // The key's base64 body, line by line: no piece of it may appear.
        let pieces = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") && $0.count >= 16 }
        #expect(!pieces.isEmpty)
        for piece in pieces {
            #expect(!lines.contains { $0.contains(piece) }, "a log line holds the private key")
        }
        // Every JWT (and every JWS) starts with the base64url of `{"`: none may be logged.
        let offending = lines.first { $0.contains("eyJ") }
        #expect(offending == nil, "a log line holds a token or signed data: \(offending.map { String($0.prefix(200)) } ?? "")")
    }
}

// MARK: - Capturing log lines

/// Every line logged through a `CapturingLogHandler`, from any thread.
final class LogCapture: Sendable {
    private let storage = Mutex<[String]>([])

    func append(_ line: String) {
        storage.withLock { $0.append(line) }
    }

    var lines: [String] { storage.withLock { $0 } }
}

/// A log handler that formats each line as a log backend would (level, label, message, all
/// metadata, the error if any) and keeps it.
struct CapturingLogHandler: LogHandler {
    let label: String
    let capture: LogCapture
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    var logLevel: Logger.Level = .trace

    init(label: String, capture: LogCapture) {
        self.label = label
        self.capture = capture
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let explicit = event.metadata { merged.merge(explicit) { _, new in new } }
        let rendered = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        var line = "\(event.level) \(label) [\(event.source)] \(event.message) \(rendered)"
        if let error = event.error { line += " error=\(String(reflecting: error))" }
        capture.append(line)
    }
}
