/// The App Store environment a receipt, notification or signed payload belongs to.
///
/// Apple spells it `Production`/`Sandbox` in verifyReceipt and v2 payloads, `PROD`/`Sandbox` in
/// v1 notifications; `Xcode` and `LocalTesting` come from StoreKit testing and are never signed
/// by Apple. See https://developer.apple.com/documentation/appstoreservernotifications/environment
public enum AppStoreEnvironment: String, Hashable, Sendable, Codable, CaseIterable {
    case production = "Production"
    case sandbox = "Sandbox"
    case xcode = "Xcode"
    case localTesting = "LocalTesting"

    /// Reads any of Apple's spellings (`Production`, `PROD`, `Sandbox`, ...); nil when unknown,
    /// so the caller keeps the raw text.
    public init?(appleValue: String) {
        switch appleValue {
        case "Production", "PROD", "production": self = .production
        case "Sandbox", "sandbox", "SANDBOX": self = .sandbox
        case "Xcode": self = .xcode
        case "LocalTesting": self = .localTesting
        default: return nil
        }
    }
}
