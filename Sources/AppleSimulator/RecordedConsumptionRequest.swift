import Foundation

/// The body of Send Consumption Information (v2, API 1.19), as Apple's `ConsumptionRequest`.
///
/// Apple's enumerations keep their raw values (`rawDeliveryStatus`, `rawRefundPreference`)
/// with typed views beside them. The simulator accepts only bodies Apple accepts, so the typed
/// views of a recorded request are never nil where the raw value is set.
/// See https://developer.apple.com/documentation/appstoreserverapi/consumptionrequest
public struct ConsumptionInformation: Sendable, Hashable, Codable {
    /// Apple's `deliveryStatus`.
    /// See https://developer.apple.com/documentation/appstoreserverapi/deliverystatus
    public enum DeliveryStatus: String, Sendable, Hashable, Codable, CaseIterable {
        case delivered = "DELIVERED"
        case undeliveredQualityIssue = "UNDELIVERED_QUALITY_ISSUE"
        case undeliveredWrongItem = "UNDELIVERED_WRONG_ITEM"
        case undeliveredServerOutage = "UNDELIVERED_SERVER_OUTAGE"
        case undeliveredOther = "UNDELIVERED_OTHER"
    }

    /// Apple's `refundPreference`.
    /// See https://developer.apple.com/documentation/appstoreserverapi/refundpreference
    public enum RefundPreference: String, Sendable, Hashable, Codable, CaseIterable {
        case decline = "DECLINE"
        case grantFull = "GRANT_FULL"
        case grantProrated = "GRANT_PRORATED"
    }

    /// Always true in an accepted request: Apple refuses any other value.
    public var customerConsented: Bool
    /// How much of the purchase was consumed, in milliunits (100 000 is all of it); nil when
    /// not sent.
    public var consumptionPercentage: Int?
    public var rawDeliveryStatus: String
    public var rawRefundPreference: String?
    public var sampleContentProvided: Bool

    public var deliveryStatus: DeliveryStatus? { DeliveryStatus(rawValue: rawDeliveryStatus) }
    public var refundPreference: RefundPreference? { rawRefundPreference.flatMap(RefundPreference.init(rawValue:)) }

    public init(
        customerConsented: Bool, consumptionPercentage: Int? = nil, deliveryStatus: DeliveryStatus,
        refundPreference: RefundPreference? = nil, sampleContentProvided: Bool
    ) {
        self.customerConsented = customerConsented
        self.consumptionPercentage = consumptionPercentage
        self.rawDeliveryStatus = deliveryStatus.rawValue
        self.rawRefundPreference = refundPreference?.rawValue
        self.sampleContentProvided = sampleContentProvided
    }

    enum CodingKeys: String, CodingKey {
        case customerConsented, consumptionPercentage, sampleContentProvided
        case rawDeliveryStatus = "deliveryStatus"
        case rawRefundPreference = "refundPreference"
    }
}

/// One Send Consumption Information call the simulator accepted: exactly what the client told
/// Apple, for tests to read back (`AppleSimulator.consumptionRequests`).
public struct RecordedConsumptionRequest: Sendable, Hashable, Encodable {
    /// The transaction in the path.
    public var transactionId: String
    /// The body, decoded.
    public var information: ConsumptionInformation
    /// The body as sent, byte for byte.
    public var rawBody: Data
    /// When the simulator accepted it, on the wall clock.
    public var receivedAt: Date
    /// The simulated now at that moment, milliseconds since 1970 (UTC).
    public var simulatedNowMs: Int64

    /// `rawBody` as text (UTF-8).
    public var rawBodyText: String { String(decoding: rawBody, as: UTF8.self) }

    private enum CodingKeys: String, CodingKey {
        case transactionId, information, rawBody, receivedAtMs, simulatedNowMs
    }

    /// For the control API: the body as text and times in milliseconds since 1970 (UTC), rather
    /// than `JSONEncoder`'s defaults (base64, seconds since 2001).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(transactionId, forKey: .transactionId)
        try container.encode(information, forKey: .information)
        try container.encode(rawBodyText, forKey: .rawBody)
        try container.encode(Int64((receivedAt.timeIntervalSince1970 * 1000).rounded(.down)), forKey: .receivedAtMs)
        try container.encode(simulatedNowMs, forKey: .simulatedNowMs)
    }
}

extension ConsumptionInformation {
    /// Decodes and checks a request body as Apple does, throwing Apple's 400 answers.
    ///
    /// `isAutoRenewable`: whether the transaction is an auto-renewable subscription, for which
    /// Apple refuses a `consumptionPercentage`.
    init(validating body: Data, isAutoRenewable: Bool) throws {
        struct Sent: Decodable {
            var customerConsented: Bool?
            var consumptionPercentage: Int?
            var deliveryStatus: String?
            var refundPreference: String?
            var sampleContentProvided: Bool?
        }
        let sent: Sent
        do {
            sent = try JSONDecoder().decode(Sent.self, from: body)
        } catch {
            throw ServerAPIError.generalBadRequest
        }
        guard sent.customerConsented == true else { throw ServerAPIError.invalidCustomerConsented }
        guard let rawDelivery = sent.deliveryStatus, let delivery = DeliveryStatus(rawValue: rawDelivery) else {
            throw ServerAPIError.invalidDeliveryStatus
        }
        guard let sampleContentProvided = sent.sampleContentProvided else {
            throw ServerAPIError.invalidSampleContentProvided
        }
        var preference: RefundPreference?
        if let rawPreference = sent.refundPreference {
            guard let known = RefundPreference(rawValue: rawPreference) else { throw ServerAPIError.invalidRefundPreference }
            preference = known
        }
        if let percentage = sent.consumptionPercentage {
            guard (0...100_000).contains(percentage) else { throw ServerAPIError.consumptionPercentageOutOfRange }
            guard !isAutoRenewable else { throw ServerAPIError.consumptionPercentageAutoRenewable }
            guard delivery == .delivered || percentage == 0 else {
                throw ServerAPIError.undeliveredConsumptionPercentageNonZero
            }
        }
        if preference == .grantProrated, (sent.consumptionPercentage ?? 0) <= 0 {
            throw ServerAPIError.grantProratedWithoutPercentage
        }
        self.init(
            customerConsented: true, consumptionPercentage: sent.consumptionPercentage, deliveryStatus: delivery,
            refundPreference: preference, sampleContentProvided: sampleContentProvided)
    }
}
