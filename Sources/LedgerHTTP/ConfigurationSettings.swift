import Foundation

/// Every variable `serve` reads, with its default as an operator reads it and whether its value
/// is a secret: what `purchase-ledger config check` prints, and what the package's
/// `/etc/purchase-ledger/ledger.env` must list (a test holds the two together).
public struct ConfigurationSetting: Sendable, Hashable {
    /// How a value is shown: in full, or with its secret parts masked.
    public enum Exposure: Sendable, Hashable {
        case shown
        /// Every character hidden (a shared secret, a signing secret).
        case secret
        /// `token:scope,…`: the tokens hidden, the scopes shown.
        case tokens
        /// A conninfo or URI: its password hidden.
        case conninfo
    }

    public let name: String
    /// What applies when the variable is unset or empty.
    public let defaultValue: String
    public let exposure: Exposure

    init(_ name: String, _ defaultValue: String, _ exposure: Exposure = .shown) {
        self.name = name
        self.defaultValue = defaultValue
        self.exposure = exposure
    }

    /// In the order docs/configuration.md lists them.
    public static let all: [ConfigurationSetting] = [
        .init("DATABASE_URL", "a private cluster in .purchase-ledger/postgres (development only)", .conninfo),
        .init("DATABASE_READ_URL", "reads go to DATABASE_URL", .conninfo),
        .init("LEDGER_HTTP_ADDRESS", "127.0.0.1:8080"),
        .init("LEDGER_API_TOKENS", "none: every call is refused", .tokens),
        .init("LEDGER_CATALOG", "none"),
        .init("LEDGER_APPS", "none: the app of APPLE_BUNDLE_ID"),
        .init("LOG_LEVEL", "info"),
        .init("APPLE_BUNDLE_ID", "none: required"),
        .init("APPLE_APP_APPLE_ID", "none"),
        .init("APPLE_SHARED_SECRET", "empty", .secret),
        .init("APPLE_VERIFY_RECEIPT_PRODUCTION_URL", "https://buy.itunes.apple.com/verifyReceipt"),
        .init("APPLE_VERIFY_RECEIPT_SANDBOX_URL", "https://sandbox.itunes.apple.com/verifyReceipt"),
        .init("APPLE_ROOT_CERTIFICATES", "Apple Root CA G3 only"),
        .init("APPLE_ISSUER_ID", "unset: the ledger does not ask Apple"),
        .init("APPLE_KEY_ID", "unset"),
        .init("APPLE_PRIVATE_KEY", "unset"),
        .init("APPLE_SERVER_API_URL", "https://api.storekit.apple.com, https://api.storekit-sandbox.apple.com"),
        .init("APPLE_CONNECT_ISSUER_ID", "unset: no price points, proceeds estimated"),
        .init("APPLE_CONNECT_KEY_ID", "unset"),
        .init("APPLE_CONNECT_PRIVATE_KEY", "unset"),
        .init("APPLE_CONNECT_API_URL", "https://api.appstoreconnect.apple.com"),
        .init("LEDGER_TRANSFER_POLICY", "keep"),
        .init("LEDGER_COMMISSION", "standard"),
        .init("LEDGER_RECONCILE_INTERVAL", "3600"),
        .init("LEDGER_REFUND_PREFERENCE", "none"),
        .init("LEDGER_SAMPLE_CONTENT_PROVIDED", "false"),
        .init("LEDGER_FINISH_TRANSACTIONS", "unset: the app finishes transactions"),
        .init("LEDGER_CONSOLE_INSECURE_COOKIES", "unset: Secure cookies"),
        .init("LEDGER_WEBHOOKS", "none"),
        .init("LEDGER_WEBHOOK_SECRET", "required when LEDGER_WEBHOOKS is set", .secret),
        .init("LEDGER_DIGEST_INTERVAL", "3600"),
        .init("LEDGER_DIGEST_FILE", "unset: digests go to the database and the webhooks only"),
        .init("LEDGER_KEY_ENCRYPTION_KEY", "unset: the people's keys are kept in the database as they are"),
        .init("LEDGER_ERASURE_JOURNAL", "unset: erasures are kept in the database only"),
    ]

    /// `value` as `config check` may print it.
    public func shown(_ value: String) -> String {
        switch exposure {
        case .shown:
            return value
        case .secret:
            return value.isEmpty ? "" : "********"
        case .tokens:
            return value.split(separator: ",").map { entry in
                guard let colon = entry.lastIndex(of: ":") else { return "********" }
                return "********" + entry[colon...]
            }.joined(separator: ",")
        case .conninfo:
            return Self.maskingPassword(value)
        }
    }

    /// A URI's `user:password@` and a conninfo's `password=…` hidden; nothing else changed.
    static func maskingPassword(_ conninfo: String) -> String {
        var text = conninfo
        if let scheme = text.range(of: "://"), let at = text[scheme.upperBound...].firstIndex(of: "@"),
           let colon = text[scheme.upperBound..<at].firstIndex(of: ":") {
            text.replaceSubrange(text.index(after: colon)..<at, with: "********")
        }
        var words: [String] = []
        var masking = false
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            if word.hasPrefix("password=") {
                words.append("password=********")
                masking = word.hasPrefix("password='") && !(word.count > 10 && word.hasSuffix("'"))
            } else if masking {
                masking = !word.hasSuffix("'")
            } else {
                words.append(String(word))
            }
        }
        // A URI's query parameter: `?password=…` or `&password=…`.
        let joined = words.joined(separator: " ")
        guard let question = joined.firstIndex(of: "?"),
              let query = joined.range(of: "password=", range: question..<joined.endIndex)
        else { return joined }
        let end = joined[query.upperBound...].firstIndex(of: "&") ?? joined.endIndex
        return joined.replacingCharacters(in: query.upperBound..<end, with: "********")
    }
}
