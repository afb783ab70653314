/// The decoded payload of an App Store Server Notification V2 (`responseBodyV2DecodedPayload`),
/// the content of the `signedPayload` Apple POSTs.
///
/// `notificationUUID` identifies one notification: Apple resends it on failure, so it is the
/// idempotency key. `signedDate` is milliseconds since 1970, UTC.
/// https://developer.apple.com/documentation/appstoreservernotifications/responsebodyv2decodedpayload
public struct NotificationV2Payload: Hashable, Sendable, Codable {
    public var rawNotificationType: String?
    public var rawSubtype: String?
    public var notificationUUID: String?
    /// Payload format version, `"2.0"`.
    public var version: String?
    public var signedDate: Int64?
    /// App and transaction data; absent for summary and external-purchase notifications.
    public var data: AppData?
    /// Present instead of `data` for RENEWAL_EXTENSION summaries.
    public var summary: Summary?

    public var notificationType: NotificationTypeV2? { rawNotificationType.flatMap(NotificationTypeV2.init(rawValue:)) }

    /// https://developer.apple.com/documentation/appstoreservernotifications/data
    public struct AppData: Hashable, Sendable, Codable {
        public var rawEnvironment: String?
        public var appAppleId: Int64?
        public var bundleId: String?
        public var bundleVersion: String?
        /// The nested JWS of the transaction; `VerifiedNotification.transaction` is it verified.
        public var signedTransactionInfo: String?
        /// The nested JWS of the renewal info; `VerifiedNotification.renewalInfo` is it verified.
        public var signedRenewalInfo: String?
        public var rawStatus: Int?
        public var rawConsumptionRequestReason: String?

        public var environment: AppStoreEnvironment? { rawEnvironment.flatMap(AppStoreEnvironment.init(appleValue:)) }
        public var status: SubscriptionStatus? { rawStatus.flatMap(SubscriptionStatus.init(rawValue:)) }

        enum CodingKeys: String, CodingKey {
            case rawEnvironment = "environment", appAppleId, bundleId, bundleVersion
            case signedTransactionInfo, signedRenewalInfo, rawStatus = "status"
            case rawConsumptionRequestReason = "consumptionRequestReason"
        }
    }

    /// https://developer.apple.com/documentation/appstoreservernotifications/summary
    public struct Summary: Hashable, Sendable, Codable {
        public var requestIdentifier: String?
        public var rawEnvironment: String?
        public var appAppleId: Int64?
        public var bundleId: String?
        public var productId: String?
        public var succeededCount: Int64?
        public var failedCount: Int64?

        enum CodingKeys: String, CodingKey {
            case requestIdentifier, rawEnvironment = "environment", appAppleId, bundleId, productId
            case succeededCount, failedCount
        }
    }

    enum CodingKeys: String, CodingKey {
        case rawNotificationType = "notificationType", rawSubtype = "subtype", notificationUUID
        case version, signedDate, data, summary
    }
}
