import Foundation
import Primitives

/// A JWS in compact serialization (`header.payload.signature`, base64url), split and decoded but
/// not yet verified. Nothing here is trusted until `SignedDataVerifier` checks it.
/// https://www.rfc-editor.org/rfc/rfc7515#section-7.1
struct CompactJWS {
    /// The protected header fields Apple uses.
    struct Header: Decodable {
        var alg: String?
        /// The certificate chain, leaf first, each base64 (not base64url) DER.
        var x5c: [String]?
    }

    var header: Header
    /// The decoded payload JSON.
    var payload: Data
    /// The raw signature: for ES256, r ‖ s, 32 bytes each.
    var signature: Data
    /// `header.payload` as sent: the bytes the signature covers.
    var signingInput: Data

    init(_ compact: String) throws(AppStoreError) {
        let parts = compact.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerBytes = Base64URL.decode(parts[0]),
              let payload = Base64URL.decode(parts[1]),
              let signature = Base64URL.decode(parts[2])
        else {
            throw AppStoreError(.invalidJWSFormat, "signed data is not three base64url segments")
        }
        do {
            header = try JSONDecoder().decode(Header.self, from: headerBytes)
        } catch {
            throw AppStoreError(.invalidJWSFormat, "the JWS header is not JSON")
        }
        self.payload = payload
        self.signature = signature
        signingInput = Data("\(parts[0]).\(parts[1])".utf8)
    }
}
