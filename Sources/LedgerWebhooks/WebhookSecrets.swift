import Crypto
import Foundation

/// The signing secrets of `LEDGER_WEBHOOK_SECRET`: Standard Webhooks' `whsec_` + base64 of
/// 24–64 random bytes, one, or two separated by a space while rotating (every message then
/// carries both signatures, so receivers holding either verify it).
public struct WebhookSecrets: Sendable {
    /// The decoded key bytes, in the order given.
    public let keys: [SymmetricKey]

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    public init(_ text: String) throws {
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        guard (1...2).contains(parts.count) else {
            throw Invalid(description: "LEDGER_WEBHOOK_SECRET holds one secret, or two separated by a space while rotating")
        }
        keys = try parts.map { part in
            guard part.hasPrefix("whsec_"), let bytes = Data(base64Encoded: String(part.dropFirst(6))) else {
                throw Invalid(description: "a webhook secret is whsec_ followed by base64")
            }
            guard (24...64).contains(bytes.count) else {
                throw Invalid(description: "a webhook secret decodes to 24 to 64 bytes, not \(bytes.count)")
            }
            return SymmetricKey(data: bytes)
        }
    }

    /// A new secret, for the README's and the demo's setup.
    public static func generate() -> String {
        "whsec_" + SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
    }
}

/// Standard Webhooks signing (standardwebhooks.com, "Signature scheme"): HMAC-SHA256 over
/// `{id}.{timestamp}.{body}` with the secret's bytes, sent as `v1,` + base64, space-separated
/// when there are two secrets.
public struct WebhookSigner: Sendable {
    public let secrets: WebhookSecrets

    public init(secrets: WebhookSecrets) {
        self.secrets = secrets
    }

    /// The `webhook-signature` header of one attempt.
    public func signature(id: String, timestamp: Int64, body: Data) -> String {
        var signed = Data("\(id).\(timestamp).".utf8)
        signed.append(body)
        return secrets.keys.map { key in
            "v1," + Data(HMAC<SHA256>.authenticationCode(for: signed, using: key)).base64EncodedString()
        }.joined(separator: " ")
    }

    /// Whether `header` holds a valid `v1` signature of the message by one of the secrets, in
    /// constant time per comparison (the receiver's side: tests and the demo's receiver).
    public func verify(id: String, timestamp: Int64, body: Data, header: String) -> Bool {
        var signed = Data("\(id).\(timestamp).".utf8)
        signed.append(body)
        for candidate in header.split(separator: " ") where candidate.hasPrefix("v1,") {
            guard let mac = Data(base64Encoded: String(candidate.dropFirst(3))) else { continue }
            for key in secrets.keys where HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: signed, using: key) { return true }
        }
        return false
    }
}
