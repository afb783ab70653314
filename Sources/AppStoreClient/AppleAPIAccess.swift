import Primitives

/// As whom, and how patiently, the ledger asks one of Apple's JWT-authenticated APIs: the key
/// (issuer, key id, the `.p8`'s PEM), one request's time-out, the retry policy and how long a
/// token is used. `ServerAPIConfiguration` and `AppStoreConnectConfiguration` each hold one and
/// add only what is theirs (hosts, bundle id, page size), so both clients retry and sign alike.
/// The private key is held in memory only; `description` never shows it.
public struct AppleAPIAccess: Sendable, CustomStringConvertible {
    public var issuerId: String
    public var keyId: String
    /// The `.p8` key's PEM text.
    public var privateKeyPEM: String
    /// One request's time-out.
    public var timeout: Duration
    /// Attempts per call, the first included, for 429, 5xx, time-outs and refused connections.
    public var maximumAttempts: Int
    /// Backoff before the second attempt; doubled after each, with full jitter, up to `maximumDelay`.
    public var baseDelay: Duration
    public var maximumDelay: Duration
    /// A `Retry-After` longer than this is not slept through: the call fails as rate limited and
    /// its caller (a worker) comes back later.
    public var longestRetryAfter: Duration
    /// How long a minted JWT is used (each API has its own ceiling; its configuration clamps it).
    public var tokenLifetime: Duration

    public init(
        issuerId: String, keyId: String, privateKeyPEM: String, timeout: Duration, maximumAttempts: Int, baseDelay: Duration,
        maximumDelay: Duration, longestRetryAfter: Duration, tokenLifetime: Duration
    ) {
        self.issuerId = issuerId
        self.keyId = keyId
        self.privateKeyPEM = privateKeyPEM
        self.timeout = timeout
        self.maximumAttempts = max(1, maximumAttempts)
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.longestRetryAfter = longestRetryAfter
        self.tokenLifetime = tokenLifetime
    }

    /// Full jitter: a random wait up to the base doubled per attempt (capped at `maximumDelay`),
    /// so clients that failed together do not come back together.
    func backoff(afterAttempt attempt: Int) -> Duration {
        let cap = min(Millis.of(maximumDelay), Millis.of(baseDelay) << min(attempt - 1, 20))
        return .milliseconds(Int64.random(in: 0...max(cap, 1)))
    }

    public var description: String { "issuer: \(issuerId), key id: \(keyId)" }
}
