import Foundation

/// An error from the `AppStore` module: a verifyReceipt exchange, a signed payload (JWS) or a body
/// that could not be read.
///
/// `description` never contains a receipt, a shared secret, a JWS or a response body: those are
/// sensitive (docs/architecture.md §3) and errors end up in logs. `debugDescription` adds the underlying
/// error's type and a coding path, still without any of those.
public struct AppStoreError: Error, Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What went wrong; extensible, so new codes never break a `switch` with a `default`.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// Lets `catch AppStoreError.Code.invalidSignature` match an error by its code.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? AppStoreError)?.code == code
        }

        // Bodies
        /// The bytes are not JSON, or not the JSON shape Apple documents.
        public static let malformedBody = Code(rawValue: "malformed_body")

        // verifyReceipt transport; all retryable.
        /// No answer within the configured time-out.
        public static let timeout = Code(rawValue: "timeout")
        /// The connection failed (DNS, TLS, reset, refused).
        public static let connectionFailed = Code(rawValue: "connection_failed")
        /// Apple answered with an HTTP status other than 200 (5xx is retryable, others are not).
        public static let unexpectedHTTPStatus = Code(rawValue: "unexpected_http_status")

        // Configuration and input; permanent.
        /// A URL, root certificate or other setting is unusable.
        public static let invalidConfiguration = Code(rawValue: "invalid_configuration")
        /// The caller passed an empty receipt or similar.
        public static let invalidRequest = Code(rawValue: "invalid_request")

        // Signed data (JWS); all permanent.
        /// Not three base64url segments, a header that is not JSON, or `alg` not ES256.
        public static let invalidJWSFormat = Code(rawValue: "invalid_jws_format")
        /// The header has no `x5c` certificate chain (or not leaf + intermediate + root).
        public static let missingCertificateChain = Code(rawValue: "missing_certificate_chain")
        /// A certificate in `x5c` is not valid base64 DER, or its key is not P-256.
        public static let invalidCertificate = Code(rawValue: "invalid_certificate")
        /// The `x5c` chain does not lead to a trusted root at the validation time, or fails
        /// Apple's certificate policy (OIDs, expiry, basic constraints).
        public static let untrustedCertificateChain = Code(rawValue: "untrusted_certificate_chain")
        /// The ES256 signature does not verify with the leaf certificate's key.
        public static let invalidSignature = Code(rawValue: "invalid_signature")
        /// The payload is for another app (`bundleId`, or `appAppleId` in production).
        public static let bundleIDMismatch = Code(rawValue: "bundle_id_mismatch")
        /// The payload is for another environment (Sandbox vs Production).
        public static let environmentMismatch = Code(rawValue: "environment_mismatch")
        /// The signature and its chain verify, but the payload is not the JSON Apple documents
        /// (a field of another type, a payload that is not an object): Apple signed it, this
        /// build cannot read it. Never reported as a bad signature.
        public static let unreadablePayload = Code(rawValue: "unreadable_payload")
    }

    public var code: Code
    /// A human sentence, free of secrets.
    public var message: String
    /// The type and safe description of the underlying error, if any (never a body or secret).
    public var underlying: String?

    public init(_ code: Code, _ message: String, underlying: String? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// True when trying the same thing later may succeed (Apple's `RETRYABLE_VERIFICATION_FAILURE`):
    /// time-outs, connection failures, HTTP 5xx and 429.
    public var isRetryable: Bool {
        switch code {
        case .timeout, .connectionFailed: return true
        case .unexpectedHTTPStatus: return httpStatus.map { $0 >= 500 || $0 == 429 } ?? false
        default: return false
        }
    }

    /// The HTTP status for `.unexpectedHTTPStatus`, kept so `isRetryable` needs no parsing.
    public var httpStatus: Int?

    public var description: String { "\(code): \(message)" }
    public var debugDescription: String {
        underlying.map { "\(description) (\($0))" } ?? description
    }
}

extension AppStoreError {
    /// Wraps a `DecodingError` keeping only its kind and coding path: the error's own message can
    /// quote values from the body, and bodies carry receipts.
    static func malformedBody(_ what: String, _ error: any Error) -> AppStoreError {
        AppStoreError(.malformedBody, "\(what) is not valid JSON of the expected shape", underlying: decodingDetail(error))
    }

    /// A verified payload `what` that does not decode (`.unreadablePayload`), with the same
    /// detail as `malformedBody`: the kind and coding path, never a value.
    static func unreadablePayload(_ what: String, _ error: any Error) -> AppStoreError {
        AppStoreError(.unreadablePayload, "\(what) is signed by a trusted chain but is not the JSON shape expected", underlying: decodingDetail(error))
    }

    private static func decodingDetail(_ error: any Error) -> String {
        let detail: String
        switch error {
        case DecodingError.dataCorrupted(let context):
            detail = "data corrupted at \(path(context.codingPath))"
        case DecodingError.keyNotFound(let key, let context):
            detail = "missing key \(key.stringValue) at \(path(context.codingPath))"
        case DecodingError.typeMismatch(let type, let context):
            detail = "expected \(type) at \(path(context.codingPath))"
        case DecodingError.valueNotFound(let type, let context):
            detail = "null where \(type) expected at \(path(context.codingPath))"
        default:
            detail = String(describing: type(of: error))
        }
        return detail
    }

    private static func path(_ codingPath: [any CodingKey]) -> String {
        codingPath.isEmpty ? "top level" : codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    }
}
