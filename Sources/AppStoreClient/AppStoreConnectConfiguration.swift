import AppStore
import Foundation

/// Where and as whom the ledger reads the App Store Connect API (price points): a team key,
/// another API and another key than the Server API's (docs/configuration.md), with the same key
/// and retry policy fields (`access`, read as this configuration's own), one host and a page
/// size. The private key is held in memory only; `description` never shows it.
@dynamicMemberLookup
public struct AppStoreConnectConfiguration: Sendable, CustomStringConvertible {
    public var access: AppleAPIAccess
    /// `APPLE_CONNECT_API_URL`, else `defaultBaseURL`; no trailing slash.
    public var baseURL: String
    /// Price points asked for per page (`limit`, 1...200; Apple's largest is 200).
    public var pageSize: Int

    public static let defaultBaseURL = "https://api.appstoreconnect.apple.com"
    /// Apple's limit on a token's life (`exp - iat`).
    public static let longestTokenLifetime: Duration = .seconds(1200)

    /// `tokenLifetime`: Apple accepts at most 20 minutes; 19 leaves a margin for clock skew.
    public init(
        issuerId: String, keyId: String, privateKeyPEM: String, baseURL: String? = nil,
        timeout: Duration = .seconds(30), maximumAttempts: Int = 4, baseDelay: Duration = .milliseconds(500),
        maximumDelay: Duration = .seconds(10), longestRetryAfter: Duration = .seconds(60), tokenLifetime: Duration = .seconds(19 * 60),
        pageSize: Int = 200
    ) {
        self.access = AppleAPIAccess(
            issuerId: issuerId, keyId: keyId, privateKeyPEM: privateKeyPEM, timeout: timeout, maximumAttempts: maximumAttempts,
            baseDelay: baseDelay, maximumDelay: maximumDelay, longestRetryAfter: longestRetryAfter,
            tokenLifetime: min(tokenLifetime, Self.longestTokenLifetime))
        var base = baseURL ?? Self.defaultBaseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = base
        self.pageSize = min(max(pageSize, 1), 200)
    }

    public subscript<Value>(dynamicMember field: WritableKeyPath<AppleAPIAccess, Value>) -> Value {
        get { access[keyPath: field] }
        set { access[keyPath: field] = newValue }
    }

    /// From `APPLE_CONNECT_ISSUER_ID`, `APPLE_CONNECT_KEY_ID`, `APPLE_CONNECT_PRIVATE_KEY` (a
    /// path to the `.p8`) and `APPLE_CONNECT_API_URL`. Nil when the three credentials are all
    /// unset (the ledger then reads no price points); an error when only some are, or the key
    /// file cannot be read.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws(AppStoreError) -> AppStoreConnectConfiguration? {
        guard let key = try AppleAPIKeySettings.read(prefix: "APPLE_CONNECT_", from: environment) else { return nil }
        return AppStoreConnectConfiguration(
            issuerId: key.issuerId, keyId: key.keyId, privateKeyPEM: try key.privateKeyPEM(setting: "APPLE_CONNECT_PRIVATE_KEY"),
            baseURL: AppleAPIKeySettings.value("APPLE_CONNECT_API_URL", in: environment))
    }

    public var description: String {
        "AppStoreConnectConfiguration(\(access), url: \(baseURL))"
    }
}
