/// Why an exchange with one of Apple's APIs did not end in a 2xx, as the shared core sees it.
/// Each client turns it into its own public error (`ServerAPIError`, `AppStoreConnectError`),
/// reading Apple's error body its own API's way; the kinds, statuses and waits are decided here
/// once.
struct AppleAPIFailure: Error {
    enum Kind {
        /// 429 after every attempt, or with a `Retry-After` longer than the policy sleeps through.
        case rateLimited
        /// A status the client named an alarm (401; 403 too for App Store Connect): the
        /// configuration is wrong, and asking again does not heal it.
        case alarm
        /// 5xx, a time-out or no connection after every attempt, or the task was cancelled.
        case unavailable
        /// Another 4xx: Apple refused the request as it stands.
        case refused
        /// The key could not sign a token.
        case unsignable
    }

    var kind: Kind
    var httpStatus: Int?
    var retryAfterSeconds: Int?
    /// What happened when no status came (`timeout`, `connection_failed`, `cancelled`) or no
    /// request went out.
    var note: String?
    /// Every attempt made, bodies verbatim; the last is the one that ended the call.
    var attempts: [ServerAPIAttempt]

    init(_ kind: Kind, httpStatus: Int? = nil, retryAfterSeconds: Int? = nil, note: String? = nil, attempts: [ServerAPIAttempt]) {
        self.kind = kind
        self.httpStatus = httpStatus
        self.retryAfterSeconds = retryAfterSeconds
        self.note = note
        self.attempts = attempts
    }

    /// The body of the attempt that ended the call.
    var body: [UInt8] { attempts.last?.body ?? [] }
}
