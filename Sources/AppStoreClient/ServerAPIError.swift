import AppStore
import Foundation

/// A Server API call that did not succeed, typed so callers can react: wait and come back
/// (`rateLimited`, `unavailable`), fix the configuration (`unauthorized`), or accept Apple's
/// answer (`refused`, e.g. 4040010 transaction id not found). `description` never holds the
/// key, the token or a body.
public struct ServerAPIError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// 429: Apple's rate limit; `retryAfter` says when to come back.
        case rateLimited = "rate_limited"
        /// 401: the key, key id, issuer or the clock is wrong. A configuration alarm, never retried.
        case unauthorized
        /// 5xx, a time-out or no connection, after every attempt.
        case unavailable
        /// Another 4xx: Apple refused the request as it stands.
        case refused
        /// The answer's body is not the documented shape.
        case malformedAnswer = "malformed_answer"
        /// The key in `APPLE_PRIVATE_KEY` cannot sign.
        case invalidKey = "invalid_key"
    }

    public var kind: Kind
    public var httpStatus: Int?
    /// Apple's `errorCode`, when its body carried one.
    public var errorCode: Int64?
    public var errorMessage: String?
    /// Seconds Apple asked to wait (429's `Retry-After`).
    public var retryAfterSeconds: Int?
    /// Every attempt made, with its body verbatim: the ledger keeps them as evidence.
    public var attempts: [ServerAPIAttempt]

    public init(_ kind: Kind, httpStatus: Int? = nil, errorCode: Int64? = nil, errorMessage: String? = nil,
                retryAfterSeconds: Int? = nil, attempts: [ServerAPIAttempt] = []) {
        self.kind = kind
        self.httpStatus = httpStatus
        self.errorCode = errorCode
        self.errorMessage = errorMessage
        self.retryAfterSeconds = retryAfterSeconds
        self.attempts = attempts
    }

    /// The shared core's failure, with Apple's `errorCode` and `errorMessage` read from the body
    /// that ended the call (a 401's body is not read: it says nothing of which setting is wrong).
    init(_ failure: AppleAPIFailure) {
        let kind: Kind = switch failure.kind {
        case .rateLimited: .rateLimited
        case .alarm: .unauthorized
        case .unavailable: .unavailable
        case .refused: .refused
        case .unsignable: .invalidKey
        }
        let apple = failure.httpStatus == nil || kind == .unauthorized
            ? nil : try? JSONDecoder().decode(ServerAPIErrorBody.self, from: Data(failure.body))
        self.init(
            kind, httpStatus: failure.httpStatus, errorCode: apple?.errorCode, errorMessage: apple?.errorMessage ?? failure.note,
            retryAfterSeconds: failure.retryAfterSeconds, attempts: failure.attempts)
    }

    /// Apple's 4040010: the transaction id is unknown to Apple (in this environment).
    public var isTransactionNotFound: Bool { errorCode == 4_040_010 }

    public var description: String {
        var text = "ServerAPIError.\(kind.rawValue)"
        if let httpStatus { text += " HTTP \(httpStatus)" }
        if let errorCode { text += " errorCode \(errorCode)" }
        if let errorMessage { text += ": \(errorMessage)" }
        if let retryAfterSeconds { text += " (retry after \(retryAfterSeconds) s)" }
        return text
    }
}

/// One HTTP exchange with the Server API, kept whole: what was asked, and what came back.
public struct ServerAPIAttempt: Sendable, Hashable {
    public var method: String
    /// The URL without credentials (the token travels in a header).
    public var url: String
    public var httpStatus: Int?
    /// The body exactly as received; empty when nothing came.
    public var body: [UInt8]
    public var latencyMs: Int64
    public var startedAtMs: Int64
    /// `timeout` or `connection_failed` when no answer came.
    public var failure: String?

    public init(method: String, url: String, httpStatus: Int?, body: [UInt8], latencyMs: Int64, startedAtMs: Int64, failure: String?) {
        self.method = method
        self.url = url
        self.httpStatus = httpStatus
        self.body = body
        self.latencyMs = latencyMs
        self.startedAtMs = startedAtMs
        self.failure = failure
    }
}
