import AppStore
import Foundation

/// Where and as whom the ledger reads the App Store Connect API (price points): a team key,
/// another API and another key than the Server API's (docs/configuration.md). The private
/// key is held in memory only; `description` never shows it.
public struct AppStoreConnectConfiguration: Sendable, CustomStringConvertible {
    public var issuerId: String
    public var keyId: String
    /// The `.p8` key's PEM text (`APPLE_CONNECT_PRIVATE_KEY` names the file).
    public var privateKeyPEM: String
    /// `APPLE_CONNECT_API_URL`, else `defaultBaseURL`; no trailing slash.
    public var baseURL: String
    /// One request's time-out.
    public var timeout: Duration
    /// Attempts per page, the first included, for 429, 5xx, time-outs and refused connections.
    public var maximumAttempts: Int
    /// Backoff before the second attempt; doubled after each, with full jitter, up to `maximumDelay`.
    public var baseDelay: Duration
    public var maximumDelay: Duration
    /// A `Retry-After` longer than this is not slept through: the call fails as rate limited.
    public var longestRetryAfter: Duration
    /// How long a minted JWT is used: Apple accepts at most 20 minutes; 19 leaves a margin for
    /// clock skew.
    public var tokenLifetime: Duration
    /// Price points asked for per page (`limit`, 1...200; Apple's largest is 200).
    public var pageSize: Int

    public static let defaultBaseURL = "https://api.appstoreconnect.apple.com"
    /// Apple's limit on a token's life (`exp - iat`).
    public static let longestTokenLifetime: Duration = .seconds(1200)

    public init(
        issuerId: String, keyId: String, privateKeyPEM: String, baseURL: String? = nil,
        timeout: Duration = .seconds(30), maximumAttempts: Int = 4, baseDelay: Duration = .milliseconds(500),
        maximumDelay: Duration = .seconds(10), longestRetryAfter: Duration = .seconds(60), tokenLifetime: Duration = .seconds(19 * 60),
        pageSize: Int = 200
    ) {
        self.issuerId = issuerId
        self.keyId = keyId
        self.privateKeyPEM = privateKeyPEM
        var base = baseURL ?? Self.defaultBaseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = base
        self.timeout = timeout
        self.maximumAttempts = max(1, maximumAttempts)
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.longestRetryAfter = longestRetryAfter
        self.tokenLifetime = min(tokenLifetime, Self.longestTokenLifetime)
        self.pageSize = min(max(pageSize, 1), 200)
    }

    /// From `APPLE_CONNECT_ISSUER_ID`, `APPLE_CONNECT_KEY_ID`, `APPLE_CONNECT_PRIVATE_KEY` (a
    /// path to the `.p8`) and `APPLE_CONNECT_API_URL`. Nil when the three credentials are all
    /// unset (the ledger then reads no price points); an error when only some are, or the key
    /// file cannot be read.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws(AppStoreError) -> AppStoreConnectConfiguration? {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let issuer = value("APPLE_CONNECT_ISSUER_ID"), key = value("APPLE_CONNECT_KEY_ID"), path = value("APPLE_CONNECT_PRIVATE_KEY")
        if issuer == nil, key == nil, path == nil { return nil }
        guard let issuer, let key, let path else {
            throw AppStoreError(.invalidConfiguration, "APPLE_CONNECT_ISSUER_ID, APPLE_CONNECT_KEY_ID and APPLE_CONNECT_PRIVATE_KEY go together")
        }
        guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else {
            // The path is configuration, not a secret; the key's content never appears.
            throw AppStoreError(.invalidConfiguration, "APPLE_CONNECT_PRIVATE_KEY: cannot read \(path)")
        }
        return AppStoreConnectConfiguration(issuerId: issuer, keyId: key, privateKeyPEM: pem, baseURL: value("APPLE_CONNECT_API_URL"))
    }

    public var description: String {
        "AppStoreConnectConfiguration(issuer: \(issuerId), key id: \(keyId), url: \(baseURL))"
    }
}
