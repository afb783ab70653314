/// An App Store Connect API call that did not succeed, typed so callers can react: come back
/// later (`rateLimited`, `unavailable`: `isRetryable`), fix the configuration (`unauthorized`,
/// `forbidden`, `invalidKey`), or accept Apple's answer (`refused`, `malformedAnswer`).
/// `description` never holds the key, the token or a body.
public struct AppStoreConnectError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// 429: Apple's rate limit.
        case rateLimited = "rate_limited"
        /// 401: the key, key id, issuer or the clock is wrong. Never retried.
        case unauthorized
        /// 403: the key's role may not read this (price points need Finance, Sales or Admin).
        case forbidden
        /// 5xx, a time-out or no connection, after every attempt.
        case unavailable
        /// Another 4xx (404: no such in-app purchase or subscription).
        case refused
        /// The answer is not the documented JSON:API document, a price is not an exact
        /// decimal of its currency, or `links.next` leaves Apple's base URL.
        case malformedAnswer = "malformed_answer"
        /// The key in `APPLE_CONNECT_PRIVATE_KEY` cannot sign.
        case invalidKey = "invalid_key"
    }

    public var kind: Kind
    public var httpStatus: Int?
    public var errorMessage: String?
    /// Seconds Apple asked to wait (429's `Retry-After`).
    public var retryAfterSeconds: Int?
    /// Every attempt made, bodies verbatim.
    public var attempts: [ServerAPIAttempt]

    public init(_ kind: Kind, httpStatus: Int? = nil, errorMessage: String? = nil, retryAfterSeconds: Int? = nil, attempts: [ServerAPIAttempt] = []) {
        self.kind = kind
        self.httpStatus = httpStatus
        self.errorMessage = errorMessage
        self.retryAfterSeconds = retryAfterSeconds
        self.attempts = attempts
    }

    /// The shared core's failure, worded by the JSON:API error document's first error.
    init(_ failure: AppleAPIFailure) {
        let kind: Kind = switch failure.kind {
        case .rateLimited: .rateLimited
        case .alarm: failure.httpStatus == 403 ? .forbidden : .unauthorized
        case .unavailable: .unavailable
        case .refused: .refused
        case .unsignable: .invalidKey
        }
        let detail = failure.httpStatus == nil ? failure.note : AppStoreConnectClient.firstErrorDetail(failure.body)
        self.init(
            kind, httpStatus: failure.httpStatus, errorMessage: detail,
            retryAfterSeconds: failure.retryAfterSeconds, attempts: failure.attempts)
    }

    /// Asking again later may succeed (429, 5xx, no answer).
    public var isRetryable: Bool { kind == .rateLimited || kind == .unavailable }

    /// The configuration is wrong (401, 403, a key that cannot sign): an alarm, not a retry.
    public var isConfiguration: Bool { kind == .unauthorized || kind == .forbidden || kind == .invalidKey }

    public var description: String {
        var text = "AppStoreConnectError.\(kind.rawValue)"
        if let httpStatus { text += " HTTP \(httpStatus)" }
        if let errorMessage { text += ": \(errorMessage)" }
        if let retryAfterSeconds { text += " (retry after \(retryAfterSeconds) s)" }
        return text
    }
}
