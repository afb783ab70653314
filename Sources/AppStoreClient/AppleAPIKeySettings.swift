import AppStore
import Foundation

/// The three settings that name an Apple API key (`<prefix>ISSUER_ID`, `<prefix>KEY_ID`,
/// `<prefix>PRIVATE_KEY`, a path to the `.p8`), read the same way for the Server API (`APPLE_`)
/// and App Store Connect (`APPLE_CONNECT_`): all three or none, and a key file that can be read.
struct AppleAPIKeySettings {
    var issuerId: String
    var keyId: String
    var keyPath: String

    /// Nil when the three are all unset (that API is then not asked); an error when only some are.
    static func read(prefix: String, from environment: [String: String]) throws(AppStoreError) -> AppleAPIKeySettings? {
        let issuer = value(prefix + "ISSUER_ID", in: environment), key = value(prefix + "KEY_ID", in: environment)
        let path = value(prefix + "PRIVATE_KEY", in: environment)
        if issuer == nil, key == nil, path == nil { return nil }
        guard let issuer, let key, let path else {
            throw AppStoreError(.invalidConfiguration, "\(prefix)ISSUER_ID, \(prefix)KEY_ID and \(prefix)PRIVATE_KEY go together")
        }
        return AppleAPIKeySettings(issuerId: issuer, keyId: key, keyPath: path)
    }

    /// A setting's value; an empty one counts as unset.
    static func value(_ name: String, in environment: [String: String]) -> String? {
        environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The key file's PEM text; `setting` names it in the error.
    func privateKeyPEM(setting: String) throws(AppStoreError) -> String {
        guard let pem = try? String(contentsOfFile: keyPath, encoding: .utf8) else {
            // The path is configuration, not a secret; the key's content never appears.
            throw AppStoreError(.invalidConfiguration, "\(setting): cannot read \(keyPath)")
        }
        return pem
    }
}
