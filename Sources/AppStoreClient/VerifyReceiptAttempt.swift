import AppStore
import Foundation

/// One request to a verifyReceipt endpoint and what came back, kept verbatim because the ledger
/// stores Apple's answers byte for byte (`AppleResponded`).
public struct VerifyReceiptAttempt: Hashable, Sendable {
    /// Which endpoint was asked.
    public var endpoint: VerifyReceiptEndpoint
    /// The URL asked.
    public var url: String
    /// When the request started: milliseconds since 1970 (UTC) on the client's clock.
    public var startedAtMs: Int64
    /// From sending the request to the last byte of the answer (or to the failure).
    public var latency: Duration
    /// The HTTP status; nil when no HTTP answer arrived (time-out, connection failure).
    public var httpStatus: Int?
    /// The response body exactly as received; empty when none arrived. Sensitive: it can hold
    /// `latest_receipt`, never log it.
    public var body: Data
    /// The `status` field of the body, when the body could be decoded.
    public var status: VerifyReceiptStatus?
    /// Why the attempt produced no usable body: transport failure, HTTP error or malformed body.
    public var failure: AppStoreError?

    public init(
        endpoint: VerifyReceiptEndpoint, url: String, startedAtMs: Int64, latency: Duration,
        httpStatus: Int?, body: Data, status: VerifyReceiptStatus?, failure: AppStoreError?
    ) {
        self.endpoint = endpoint
        self.url = url
        self.startedAtMs = startedAtMs
        self.latency = latency
        self.httpStatus = httpStatus
        self.body = body
        self.status = status
        self.failure = failure
    }
}
