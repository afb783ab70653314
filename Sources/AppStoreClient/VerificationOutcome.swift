import AppStore
/// The result of verifying one receipt: a verdict the caller acts on without interpreting status
/// codes, the decoded final body, and every attempt made on the way.
public struct VerificationOutcome: Sendable {
    /// What the caller should do.
    public enum Verdict: Hashable, Sendable {
        /// Status 0: deliver what the body proves (after checking bundle id and transaction).
        case valid
        /// Status 21006: the body is decoded and usable; the subscription has expired.
        case expiredButDecoded
        /// Apple could not answer now: keep the receipt pending and retry with backoff
        /// (21005, 21009, retryable 21100–21199, HTTP 5xx/429, time-out, connection failure,
        /// malformed body).
        case retryLater(Cause)
        /// The receipt will never verify: reject it (21000, 21003, 21010, 21002 after retries,
        /// non-retryable 21100–21199, unknown statuses, an environment loop).
        case permanent(Cause)
        /// Our side is misconfigured (21004: shared secret wrong; HTTP 4xx): alert an operator
        /// and keep the receipt pending.
        case configurationAlarm(Cause)
    }

    /// Why a verdict is not `valid`: an App Store status or an error.
    public enum Cause: Hashable, Sendable, CustomStringConvertible {
        case status(VerifyReceiptStatus)
        case error(AppStoreError)

        public var description: String {
            switch self {
            case .status(let status): return "status \(status)"
            case .error(let error): return error.description
            }
        }
    }

    public var verdict: Verdict
    /// The decoded body of the last attempt, when it could be decoded (also for most failures).
    public var response: VerifyReceiptResponse?
    /// Every request made, in order; never empty.
    public var attempts: [VerifyReceiptAttempt]

    public init(verdict: Verdict, response: VerifyReceiptResponse?, attempts: [VerifyReceiptAttempt]) {
        self.verdict = verdict
        self.response = response
        self.attempts = attempts
    }

    /// The endpoint that gave the final answer.
    public var endpoint: VerifyReceiptEndpoint? { attempts.last?.endpoint }

    /// True for `valid` and `expiredButDecoded`: `response` may be used to deliver.
    public var isUsable: Bool {
        switch verdict {
        case .valid, .expiredButDecoded: return true
        default: return false
        }
    }
}
