import AppStore
import Foundation

/// Where and as whom the ledger asks the App Store Server API (docs/configuration.md): the key
/// and retry policy every Apple API shares (`access`, whose fields read as this configuration's
/// own: `configuration.keyId`, `configuration.timeout`), the bundle id its tokens carry, and its
/// two hosts. The private key is held in memory only; `description` never shows it.
@dynamicMemberLookup
public struct ServerAPIConfiguration: Sendable, CustomStringConvertible {
    public var access: AppleAPIAccess
    public var bundleId: String
    public var productionURL: String
    public var sandboxURL: String

    public static let productionBaseURL = "https://api.storekit.apple.com"
    public static let sandboxBaseURL = "https://api.storekit-sandbox.apple.com"
    /// Apple's limit on a token's life.
    public static let longestTokenLifetime: Duration = .seconds(3600)

    public init(
        issuerId: String, keyId: String, privateKeyPEM: String, bundleId: String, baseURL: String? = nil,
        timeout: Duration = .seconds(15), maximumAttempts: Int = 4, baseDelay: Duration = .milliseconds(500),
        maximumDelay: Duration = .seconds(10), longestRetryAfter: Duration = .seconds(30), tokenLifetime: Duration = .seconds(1800)
    ) {
        self.access = AppleAPIAccess(
            issuerId: issuerId, keyId: keyId, privateKeyPEM: privateKeyPEM, timeout: timeout, maximumAttempts: maximumAttempts,
            baseDelay: baseDelay, maximumDelay: maximumDelay, longestRetryAfter: longestRetryAfter,
            tokenLifetime: min(tokenLifetime, Self.longestTokenLifetime))
        self.bundleId = bundleId
        // One URL (the simulator) serves both environments, as the override says.
        self.productionURL = baseURL ?? Self.productionBaseURL
        self.sandboxURL = baseURL ?? Self.sandboxBaseURL
    }

    public subscript<Value>(dynamicMember field: WritableKeyPath<AppleAPIAccess, Value>) -> Value {
        get { access[keyPath: field] }
        set { access[keyPath: field] = newValue }
    }

    /// From `APPLE_ISSUER_ID`, `APPLE_KEY_ID`, `APPLE_PRIVATE_KEY` (a path to the `.p8`),
    /// `APPLE_SERVER_API_URL`, with `bundleId`, the app its tokens name (read with the app's
    /// other settings: `APPLE_BUNDLE_ID` or `LEDGER_APPS`). Nil when the three credentials are
    /// all unset (the ledger then does not ask Apple); an error when only some are, or the key
    /// cannot be read.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment, bundleId: String
    ) throws(AppStoreError) -> ServerAPIConfiguration? {
        guard let key = try AppleAPIKeySettings.read(prefix: "APPLE_", from: environment) else { return nil }
        return ServerAPIConfiguration(
            issuerId: key.issuerId, keyId: key.keyId, privateKeyPEM: try key.privateKeyPEM(setting: "APPLE_PRIVATE_KEY"), bundleId: bundleId,
            baseURL: AppleAPIKeySettings.value("APPLE_SERVER_API_URL", in: environment))
    }

    public func baseURL(for environment: AppStoreEnvironment) -> String {
        environment == .sandbox ? sandboxURL : productionURL
    }

    public var description: String {
        "ServerAPIConfiguration(\(access), bundle: \(bundleId), production: \(productionURL), sandbox: \(sandboxURL))"
    }
}
