/// The decoded payload of an App Store Server Notification V2 (`responseBodyV2DecodedPayload`),
/// the content of the `signedPayload` Apple POSTs.
///
/// `notificationUUID` identifies one notification: Apple resends it on failure, so it is the
/// idempotency key. `signedDate` is milliseconds since 1970, UTC (a fraction of a millisecond,
/// as Xcode signs, is dropped). Exactly one block names the app: `data` (most types), `summary`
/// (RENEWAL_EXTENSION summaries), `externalPurchaseToken` (EXTERNAL_PURCHASE_TOKEN) or `appData`
/// (RESCIND_CONSENT); `addressee` reads it as Apple's libraries do. Types and subtypes keep
/// Apple's raw value, so one added later is recorded, never refused.
/// https://developer.apple.com/documentation/appstoreservernotifications/responsebodyv2decodedpayload
public struct NotificationV2Payload: Hashable, Sendable, Codable {
    public var rawNotificationType: String?
    public var rawSubtype: String?
    public var notificationUUID: String?
    /// Payload format version, `"2.0"`.
    public var version: String?
    public var signedDate: Int64?
    /// App and transaction data; absent for summary, external-purchase and consent notifications.
    public var data: NotificationData?
    /// Present instead of `data` for RENEWAL_EXTENSION summaries.
    public var summary: Summary?
    /// Present instead of `data` for EXTERNAL_PURCHASE_TOKEN.
    public var externalPurchaseToken: ExternalPurchaseToken?
    /// Present instead of `data` for RESCIND_CONSENT.
    public var appData: AppData?

    public var notificationType: NotificationTypeV2? { rawNotificationType.flatMap(NotificationTypeV2.init(rawValue:)) }
    public var subtype: NotificationSubtypeV2? { rawSubtype.flatMap(NotificationSubtypeV2.init(rawValue:)) }

    /// The app and environment this notification is for, from whichever block it carries.
    public var addressee: NotificationAddressee {
        typealias Named = NotificationAddressee.Named
        return NotificationAddressee(
            data: data.map { Named(bundleId: $0.bundleId, appAppleId: $0.appAppleId, rawEnvironment: $0.rawEnvironment) },
            summary: summary.map { Named(bundleId: $0.bundleId, appAppleId: $0.appAppleId, rawEnvironment: $0.rawEnvironment) },
            externalPurchaseToken: externalPurchaseToken.map {
                Named(bundleId: $0.bundleId, appAppleId: $0.appAppleId, rawEnvironment: $0.rawEnvironment)
            },
            appData: appData.map { Named(bundleId: $0.bundleId, appAppleId: $0.appAppleId, rawEnvironment: $0.rawEnvironment) })
    }

    /// https://developer.apple.com/documentation/appstoreservernotifications/data
    public struct NotificationData: Hashable, Sendable, Codable {
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
        /// The storefronts (ISO 3166-1 alpha-3) the mass extension covered.
        public var storefrontCountryCodes: [String]?
        public var succeededCount: Int64?
        public var failedCount: Int64?

        enum CodingKeys: String, CodingKey {
            case requestIdentifier, rawEnvironment = "environment", appAppleId, bundleId, productId
            case storefrontCountryCodes, succeededCount, failedCount
        }
    }

    /// An external purchase token (EXTERNAL_PURCHASE_TOKEN). It names no environment: a token
    /// from the sandbox has an id starting with `SANDBOX`.
    /// https://developer.apple.com/documentation/appstoreservernotifications/externalpurchasetoken
    public struct ExternalPurchaseToken: Hashable, Sendable, Codable {
        public var externalPurchaseId: String?
        /// When the token was created; milliseconds since 1970, UTC.
        public var tokenCreationDate: Int64?
        public var appAppleId: Int64?
        public var bundleId: String?

        /// `Sandbox` or `Production`, from `externalPurchaseId` (see `NotificationAddressee`).
        public var rawEnvironment: String { NotificationAddressee.environment(ofExternalPurchaseId: externalPurchaseId) }

        enum CodingKeys: String, CodingKey {
            case externalPurchaseId, tokenCreationDate, appAppleId, bundleId
        }
    }

    /// The app a RESCIND_CONSENT notification is about, with its signed app transaction.
    /// https://developer.apple.com/documentation/appstoreservernotifications/appdata
    public struct AppData: Hashable, Sendable, Codable {
        public var appAppleId: Int64?
        public var bundleId: String?
        public var rawEnvironment: String?
        /// The nested JWS of the app transaction (`AppTransaction`); kept, not verified: the
        /// ledger decides nothing from it.
        public var signedAppTransactionInfo: String?

        public var environment: AppStoreEnvironment? { rawEnvironment.flatMap(AppStoreEnvironment.init(appleValue:)) }

        enum CodingKeys: String, CodingKey {
            case appAppleId, bundleId, rawEnvironment = "environment", signedAppTransactionInfo
        }
    }

    enum CodingKeys: String, CodingKey {
        case rawNotificationType = "notificationType", rawSubtype = "subtype", notificationUUID
        case version, signedDate, data, summary, externalPurchaseToken, appData
    }
}

// Decoding by hand only where a date may carry a fraction of a millisecond; in extensions, so
// the memberwise initializers stay.

extension NotificationV2Payload {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        rawNotificationType = try container.decodeIfPresent(String.self, forKey: .rawNotificationType)
        rawSubtype = try container.decodeIfPresent(String.self, forKey: .rawSubtype)
        notificationUUID = try container.decodeIfPresent(String.self, forKey: .notificationUUID)
        version = try container.decodeIfPresent(String.self, forKey: .version)
        signedDate = try container.decodeMillisecondsIfPresent(forKey: .signedDate)
        data = try container.decodeIfPresent(NotificationData.self, forKey: .data)
        summary = try container.decodeIfPresent(Summary.self, forKey: .summary)
        externalPurchaseToken = try container.decodeIfPresent(ExternalPurchaseToken.self, forKey: .externalPurchaseToken)
        appData = try container.decodeIfPresent(AppData.self, forKey: .appData)
    }
}

extension NotificationV2Payload.ExternalPurchaseToken {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        externalPurchaseId = try container.decodeIfPresent(String.self, forKey: .externalPurchaseId)
        tokenCreationDate = try container.decodeMillisecondsIfPresent(forKey: .tokenCreationDate)
        appAppleId = try container.decodeIfPresent(Int64.self, forKey: .appAppleId)
        bundleId = try container.decodeIfPresent(String.self, forKey: .bundleId)
    }
}
