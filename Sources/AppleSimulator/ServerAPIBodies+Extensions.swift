import Foundation

/// The bodies of the renewal-date extension endpoints, field for field as Apple's.
extension ServerAPIBody {
    /// Extend a Subscription Renewal Date: `effectiveDate` is the period's new end, in
    /// milliseconds since 1970 (UTC).
    /// https://developer.apple.com/documentation/appstoreserverapi/extendrenewaldateresponse
    struct ExtendRenewalDate: Encodable {
        var originalTransactionId: String
        var webOrderLineItemId: String?
        var success: Bool
        var effectiveDate: Int64
    }

    /// Extend Subscription Renewal Dates for All Active Subscribers.
    /// https://developer.apple.com/documentation/appstoreserverapi/massextendrenewaldateresponse
    struct MassExtendRenewalDate: Encodable {
        var requestIdentifier: String
    }

    /// Get Status of Subscription Renewal Date Extensions; `completeDate` only once complete.
    /// https://developer.apple.com/documentation/appstoreserverapi/massextendrenewaldatestatusresponse
    struct MassExtendRenewalDateStatus: Encodable {
        var requestIdentifier: String
        var complete: Bool
        var completeDate: Int64?
        var succeededCount: Int64
        var failedCount: Int64

        init(_ mass: MassRenewalExtension) {
            requestIdentifier = mass.requestIdentifier
            complete = mass.isComplete
            completeDate = mass.completeDateMs
            succeededCount = Int64(mass.succeededCount)
            failedCount = Int64(mass.failedCount)
        }
    }
}

/// The body of Extend a Subscription Renewal Date, or of its mass variant, checked as Apple
/// checks it: `extendByDays` 1...90 (else 4000009), `extendReasonCode` 0...3 (else 4000010),
/// `requestIdentifier` 1...128 characters (else 4000011); for a mass extension also
/// `productId` (else 4000023) and `storefrontCountryCodes`, when given, a non-empty list of
/// ISO 3166-1 alpha-3 codes (else 4000027, 4000028).
/// https://developer.apple.com/documentation/appstoreserverapi/extendrenewaldaterequest
struct RenewalExtensionRequest: Sendable, Hashable {
    static let maximumDays = 90
    static let reasonCodes = 0...3
    static let maximumRequestIdentifierLength = 128

    var extendByDays: Int
    var extendReasonCode: Int
    var requestIdentifier: String
    /// Mass extension only (empty for a single one).
    var productId: String = ""
    /// Mass extension only: nil, every storefront.
    var storefrontCountryCodes: [String]? = nil

    /// True for an identifier Apple accepts: 1...128 characters.
    static func isValid(requestIdentifier: String) -> Bool {
        (1...maximumRequestIdentifierLength).contains(requestIdentifier.count)
    }
}

extension RenewalExtensionRequest {
    /// Parses and checks `body`; `mass` also reads `productId` and `storefrontCountryCodes`.
    init(validating body: Data, mass: Bool) throws {
        let sent: Sent
        do {
            sent = try JSONDecoder().decode(Sent.self, from: body)
        } catch {
            throw ServerAPIError.generalBadRequest
        }
        guard let days = sent.extendByDays, (1...Self.maximumDays).contains(days) else {
            throw ServerAPIError.invalidExtendByDays
        }
        guard let reason = sent.extendReasonCode, Self.reasonCodes.contains(reason) else {
            throw ServerAPIError.invalidExtendReasonCode
        }
        guard let identifier = sent.requestIdentifier, Self.isValid(requestIdentifier: identifier) else {
            throw ServerAPIError.invalidRequestIdentifier
        }
        self.init(extendByDays: days, extendReasonCode: reason, requestIdentifier: identifier)
        guard mass else { return }
        guard let productId = sent.productId, !productId.isEmpty else { throw ServerAPIError.invalidProductId }
        self.productId = productId
        switch sent.storefronts {
        case .absent:
            break
        case .malformed:
            throw ServerAPIError.invalidStorefrontCountryCode
        case .codes(let codes):
            guard !codes.isEmpty else { throw ServerAPIError.invalidEmptyStorefrontCountryCodeList }
            guard codes.allSatisfy(SimulatedStorefront.isCountryCode) else {
                throw ServerAPIError.invalidStorefrontCountryCode
            }
            storefrontCountryCodes = codes
        }
    }

    /// The body as sent. A field of the wrong JSON type reads as absent, so it is refused with
    /// that field's own error code rather than as a bad body.
    private struct Sent: Decodable {
        enum Storefronts {
            case absent
            case malformed
            case codes([String])
        }

        var extendByDays: Int?
        var extendReasonCode: Int?
        var requestIdentifier: String?
        var productId: String?
        var storefronts: Storefronts

        enum CodingKeys: String, CodingKey {
            case extendByDays, extendReasonCode, requestIdentifier, productId, storefrontCountryCodes
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            extendByDays = try? container.decodeIfPresent(Int.self, forKey: .extendByDays)
            extendReasonCode = try? container.decodeIfPresent(Int.self, forKey: .extendReasonCode)
            requestIdentifier = try? container.decodeIfPresent(String.self, forKey: .requestIdentifier)
            productId = try? container.decodeIfPresent(String.self, forKey: .productId)
            if (try? container.decodeNil(forKey: .storefrontCountryCodes)) ?? true {
                // Absent or null.
                storefronts = .absent
            } else if let codes = try? container.decode([String].self, forKey: .storefrontCountryCodes) {
                storefronts = .codes(codes)
            } else {
                storefronts = .malformed
            }
        }
    }
}
