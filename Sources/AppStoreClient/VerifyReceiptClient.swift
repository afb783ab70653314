import AppStore
import Foundation
import Logging
import Primitives

/// Verifies receipts with Apple's verifyReceipt endpoints.
///
/// Asks production first; 21007 → sandbox; 21008 → production (at most
/// `maximumEnvironmentSwitches` switches); 21002 is asked again `malformedReceiptRetries` times.
/// Nothing else is retried here: a `retryLater` verdict goes back to the caller, whose worker
/// retries with backoff and survives restarts. Every attempt is returned with its raw body.
/// Logs carry endpoint, status and latency, never the receipt, the secret or a body.
/// https://developer.apple.com/documentation/appstorereceipts/verifyreceipt
public struct VerifyReceiptClient: Sendable {
    public var configuration: VerifyReceiptConfiguration
    /// Dates each attempt (`VerifyReceiptAttempt.startedAtMs`, recorded as `AppleResponded`):
    /// the ledger's clock.
    public let clock: WallClock
    private let transport: any VerifyReceiptTransport
    private let logger: Logger

    public init(
        configuration: VerifyReceiptConfiguration,
        clock: WallClock,
        transport: any VerifyReceiptTransport = HTTPVerifyReceiptTransport(),
        logger: Logger = Logger(label: "AppStore.VerifyReceiptClient")
    ) {
        self.configuration = configuration
        self.clock = clock
        self.transport = transport
        self.logger = logger
    }

    /// Verifies `receiptData` (the base64 receipt as the app sent it).
    ///
    /// Apple's answers, transport failures and malformed bodies are all a `VerificationOutcome`,
    /// so the attempts are never lost; only unusable input throws (`.invalidRequest`).
    ///
    /// `sharedSecret` replaces the configured one for this receipt (a ledger serving several
    /// apps tries each app's secret when Apple answers 21004).
    public func verify(
        receiptData: String,
        excludeOldTransactions: Bool = false,
        startingAt firstEndpoint: VerifyReceiptEndpoint = .production,
        sharedSecret: String? = nil
    ) async throws(AppStoreError) -> VerificationOutcome {
        guard !receiptData.isEmpty else {
            throw AppStoreError(.invalidRequest, "receipt data is empty")
        }
        let requestBody = try makeRequestBody(
            receiptData: receiptData, excludeOldTransactions: excludeOldTransactions, sharedSecret: sharedSecret ?? configuration.sharedSecret)
        var attempts: [VerifyReceiptAttempt] = []
        var endpoint = firstEndpoint
        var switches = 0
        var malformedRetries = 0
        while true {
            let (attempt, response) = await send(requestBody, to: endpoint)
            attempts.append(attempt)
            let verdict: VerificationOutcome.Verdict
            if let failure = attempt.failure {
                verdict = failure.isRetryable || failure.code == .malformedBody
                    ? .retryLater(.error(failure))
                    : (failure.code == .unexpectedHTTPStatus || failure.code == .invalidConfiguration
                        ? .configurationAlarm(.error(failure)) : .permanent(.error(failure)))
            } else if let response {
                switch response.status.classify(isRetryable: response.isRetryable) {
                case .valid: verdict = .valid
                case .expiredButDecoded: verdict = .expiredButDecoded
                case .configurationAlarm: verdict = .configurationAlarm(.status(response.status))
                case .permanent: verdict = .permanent(.status(response.status))
                case .wrongEnvironment(let other):
                    if switches < configuration.maximumEnvironmentSwitches {
                        switches += 1
                        endpoint = other
                        continue
                    }
                    verdict = .permanent(.status(response.status))
                case .retryLater:
                    if response.status == .malformedReceiptData {
                        if malformedRetries < configuration.malformedReceiptRetries {
                            malformedRetries += 1
                            try? await Task.sleep(for: configuration.malformedReceiptRetryDelay)
                            continue
                        }
                        verdict = .permanent(.status(response.status))
                    } else {
                        verdict = .retryLater(.status(response.status))
                    }
                }
            } else {
                preconditionFailure("an attempt has either a failure or a response")
            }
            logger.debug("verifyReceipt finished", metadata: [
                "attempts": "\(attempts.count)", "endpoint": "\(endpoint.rawValue)", "verdict": "\(verdict)",
            ])
            return VerificationOutcome(verdict: verdict, response: response, attempts: attempts)
        }
    }

    /// One POST, timed, with its body decoded when it is a 200.
    private func send(_ body: Data, to endpoint: VerifyReceiptEndpoint) async -> (VerifyReceiptAttempt, VerifyReceiptResponse?) {
        let url = configuration.url(for: endpoint)
        let startedAtMs = clock()
        let stopwatch = ContinuousClock()
        let start = stopwatch.now
        var attempt = VerifyReceiptAttempt(
            endpoint: endpoint, url: url, startedAtMs: startedAtMs, latency: .zero,
            httpStatus: nil, body: Data(), status: nil, failure: nil)
        var response: VerifyReceiptResponse?
        do throws(AppStoreError) {
            let answer = try await transport.post(
                url: url, body: body, timeout: configuration.timeout,
                maximumResponseBytes: configuration.maximumResponseBytes)
            attempt.latency = stopwatch.now - start
            attempt.httpStatus = answer.httpStatus
            attempt.body = answer.body
            if answer.httpStatus == 200 {
                response = try VerifyReceiptResponse(jsonBytes: answer.body)
                attempt.status = response?.status
            } else {
                var failure = AppStoreError(.unexpectedHTTPStatus, "verifyReceipt answered HTTP \(answer.httpStatus)")
                failure.httpStatus = answer.httpStatus
                attempt.failure = failure
            }
        } catch {
            attempt.latency = stopwatch.now - start
            attempt.failure = error
        }
        logger.info("verifyReceipt attempt", metadata: [
            "endpoint": "\(endpoint.rawValue)",
            "http_status": "\(attempt.httpStatus.map(String.init) ?? "none")",
            "status": "\(attempt.status?.description ?? "none")",
            "latency_ms": "\(Millis.of(attempt.latency))",
            "failure": "\(attempt.failure?.code.rawValue ?? "none")",
        ])
        return (attempt, response)
    }

    /// `{"receipt-data", "password", "exclude-old-transactions"}`; `password` only when set.
    private func makeRequestBody(receiptData: String, excludeOldTransactions: Bool, sharedSecret: String?) throws(AppStoreError) -> Data {
        struct Request: Encodable {
            var receiptData: String
            var password: String?
            var excludeOldTransactions: Bool
            enum CodingKeys: String, CodingKey {
                case receiptData = "receipt-data"
                case password
                case excludeOldTransactions = "exclude-old-transactions"
            }
        }
        let secret = sharedSecret.flatMap { $0.isEmpty ? nil : $0 }
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .withoutEscapingSlashes
            return try encoder.encode(Request(receiptData: receiptData, password: secret, excludeOldTransactions: excludeOldTransactions))
        } catch {
            throw AppStoreError(.invalidRequest, "the request could not be encoded", underlying: String(describing: type(of: error)))
        }
    }
}
