import SwiftASN1
import X509

/// Apple's own requirement on App Store signing chains, on top of RFC 5280: exactly leaf,
/// intermediate and root, the leaf marked as an App Store receipt signer and the intermediate as
/// Apple's WWDR intermediate (as Apple's `ChainVerifier` checks). Both Apple's production chain
/// and the app-store-server-library test chain carry these extensions; a simulator CA must too.
public struct AppleCertificatePolicy: VerifierPolicy {
    /// On the leaf: 1.2.840.113635.100.6.11.1 (Apple App Store receipt signing).
    public static let receiptSignerOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    /// On the intermediate: 1.2.840.113635.100.6.2.1 (Apple Worldwide Developer Relations CA).
    public static let wwdrIntermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    public let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = []

    public init() {}

    public func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) -> PolicyEvaluationResult {
        guard chain.count == 3 else {
            return .failsToMeetPolicy(reason: "chain has \(chain.count) certificates, Apple's has 3")
        }
        guard chain[0].extensions.contains(where: { $0.oid == Self.receiptSignerOID }) else {
            return .failsToMeetPolicy(reason: "leaf lacks the App Store receipt signing OID")
        }
        guard chain[1].extensions.contains(where: { $0.oid == Self.wwdrIntermediateOID }) else {
            return .failsToMeetPolicy(reason: "intermediate lacks the Apple WWDR OID")
        }
        return .meetsPolicy
    }
}
