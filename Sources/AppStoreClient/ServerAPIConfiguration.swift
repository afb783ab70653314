import AppStore
import Foundation

/// Where and as whom the ledger asks the App Store Server API (docs/configuration.md).
/// The private key is held in memory only; `description` never shows it.
public struct ServerAPIConfiguration: Sendable, CustomStringConvertible {
    public var issuerId: String
    public var keyId: String
    /// The `.p8` key's PEM text (`APPLE_PRIVATE_KEY` names the file).
    public var privateKeyPEM: String
    public var bundleId: String
    public var productionURL: String
    public var sandboxURL: String
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
    /// How long a minted JWT is used; Apple accepts at most 60 minutes.
    public var tokenLifetime: Duration

    public static let productionBaseURL = "https://api.storekit.apple.com"
    public static let sandboxBaseURL = "https://api.storekit-sandbox.apple.com"

    public init(
        issuerId: String, keyId: String, privateKeyPEM: String, bundleId: String, baseURL: String? = nil,
        timeout: Duration = .seconds(15), maximumAttempts: Int = 4, baseDelay: Duration = .milliseconds(500),
        maximumDelay: Duration = .seconds(10), longestRetryAfter: Duration = .seconds(30), tokenLifetime: Duration = .seconds(1800)
    ) {
        self.issuerId = issuerId
        self.keyId = keyId
        self.privateKeyPEM = privateKeyPEM
        self.bundleId = bundleId
        // One URL (the simulator) serves both environments, as the override says.
        self.productionURL = baseURL ?? Self.productionBaseURL
        self.sandboxURL = baseURL ?? Self.sandboxBaseURL
        self.timeout = timeout
        self.maximumAttempts = max(1, maximumAttempts)
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.longestRetryAfter = longestRetryAfter
        self.tokenLifetime = min(tokenLifetime, .seconds(3600))
    }

    /// From `APPLE_ISSUER_ID`, `APPLE_KEY_ID`, `APPLE_PRIVATE_KEY` (a path to the `.p8`),
    /// `APPLE_BUNDLE_ID` and `APPLE_SERVER_API_URL`. Nil when the three credentials are all
    /// unset (the ledger then does not ask Apple); an error when only some are, or the key
    /// cannot be read.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws(AppStoreError) -> ServerAPIConfiguration? {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let issuer = value("APPLE_ISSUER_ID"), key = value("APPLE_KEY_ID"), path = value("APPLE_PRIVATE_KEY")
        if issuer == nil, key == nil, path == nil { return nil }
        guard let issuer, let key, let path else {
            throw AppStoreError(.invalidConfiguration, "APPLE_ISSUER_ID, APPLE_KEY_ID and APPLE_PRIVATE_KEY go together")
        }
        guard let bundle = value("APPLE_BUNDLE_ID") else {
            throw AppStoreError(.invalidConfiguration, "the App Store Server API needs APPLE_BUNDLE_ID")
        }
        guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else {
            // The path is configuration, not a secret; the key's content never appears.
            throw AppStoreError(.invalidConfiguration, "APPLE_PRIVATE_KEY: cannot read \(path)")
        }
        return ServerAPIConfiguration(issuerId: issuer, keyId: key, privateKeyPEM: pem, bundleId: bundle, baseURL: value("APPLE_SERVER_API_URL"))
    }

    public func baseURL(for environment: AppStoreEnvironment) -> String {
        environment == .sandbox ? sandboxURL : productionURL
    }

    public var description: String {
        "ServerAPIConfiguration(issuer: \(issuerId), key id: \(keyId), bundle: \(bundleId), production: \(productionURL), sandbox: \(sandboxURL))"
    }
}
