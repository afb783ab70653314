import Crypto
import Foundation
import Primitives
import SwiftASN1
import X509

/// The simulator's stand-in for Apple's signing chain: a root, an intermediate and a leaf, all
/// P-256, generated at start and never written to disk.
///
/// The shape follows Apple's chain (Apple Root CA G3 → WWDR G6 → receipt signer), including
/// the marker extensions Apple's `ChainVerifier` looks for: 1.2.840.113635.100.6.2.1 on the
/// intermediate and 1.2.840.113635.100.6.11.1 on the leaf. Trust the root
/// (`rootCertificateDER`) through `APPLE_ROOT_CERTIFICATES`.
public struct SimulatorCertificateAuthority: Sendable {
    /// DER bytes of the self-signed root.
    public let rootCertificateDER: [UInt8]
    /// The root in PEM ("-----BEGIN CERTIFICATE-----").
    public let rootCertificatePEM: String
    /// `x5c` of every JWS: leaf, intermediate, root, each base64 (not base64url) DER.
    let chainBase64: [String]
    private let leafKey: P256.Signing.PrivateKey

    static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]
    static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]

    /// Generates a fresh chain valid from a year before `validFrom` to twenty years after
    /// `validUntil`, so that signatures verify at any simulated `signedDate` and at the wall time.
    public init(validFrom: Date, validUntil: Date) throws {
        let notBefore = validFrom.addingTimeInterval(-365 * 86_400)
        let notAfter = validUntil.addingTimeInterval(20 * 365 * 86_400)
        let rootKey = P256.Signing.PrivateKey()
        let intermediateKey = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        func name(_ commonName: String) throws -> DistinguishedName {
            try DistinguishedName {
                CommonName(commonName)
                OrganizationName("PurchaseLedger AppleSimulator")
            }
        }
        let rootName = try name("PurchaseLedger Simulator Root CA")
        let intermediateName = try name("PurchaseLedger Simulator Intermediate CA")
        let leafName = try name("PurchaseLedger Simulator Store Signer")
        let null: ArraySlice<UInt8> = [0x05, 0x00]  // ASN.1 NULL, the value Apple's markers carry

        func issue(
            _ key: P256.Signing.PrivateKey, subject: DistinguishedName, issuer: DistinguishedName,
            signedBy issuerKey: P256.Signing.PrivateKey, extensions: Certificate.Extensions
        ) throws -> Certificate {
            try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
                notValidBefore: notBefore, notValidAfter: notAfter, issuer: issuer, subject: subject,
                signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: .init(issuerKey))
        }
        let root = try issue(
            rootKey, subject: rootName, issuer: rootName, signedBy: rootKey,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            })
        let intermediate = try issue(
            intermediateKey, subject: intermediateName, issuer: rootName, signedBy: rootKey,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                Certificate.Extension(oid: Self.intermediateMarker, critical: false, value: null)
            })
        let leaf = try issue(
            leafKey, subject: leafName, issuer: intermediateName, signedBy: intermediateKey,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                Certificate.Extension(oid: Self.leafMarker, critical: false, value: null)
            })

        func der(_ certificate: Certificate) throws -> [UInt8] {
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return serializer.serializedBytes
        }
        self.rootCertificateDER = try der(root)
        self.rootCertificatePEM = try root.serializeAsPEM().pemString
        self.chainBase64 = try [leaf, intermediate, root].map { Data(try der($0)).base64EncodedString() }
        self.leafKey = leafKey
    }

    /// A compact JWS (`header.payload.signature`, base64url) of `payload`, ES256 with the
    /// chain in `x5c`, as Apple signs transactions, renewal infos and notifications.
    func sign(_ payload: some Encodable) throws -> String {
        let encoder = Self.encoder()
        return try sign(payloadJSON: encoder.encode(payload), encoder: encoder)
    }

    /// A compact JWS of `payloadJSON` signed byte for byte as given, with the chain in `x5c`:
    /// for shapes the simulator does not build itself (Apple's library fixtures, a block or a
    /// value Apple added later, a date with a fraction of a millisecond as Xcode signs it).
    /// Nothing checks that the bytes are JSON.
    public func sign(payloadJSON: Data) throws -> String {
        try sign(payloadJSON: payloadJSON, encoder: Self.encoder())
    }

    private func sign(payloadJSON: Data, encoder: JSONEncoder) throws -> String {
        let header = JWSHeader(alg: "ES256", x5c: chainBase64)
        let signingInput = try Base64URL.encode(encoder.encode(header)) + "." + Base64URL.encode(payloadJSON)
        let signature = try leafKey.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }

    private static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    private struct JWSHeader: Encodable {
        var alg: String
        var x5c: [String]
    }

}
