/// What a v2 notification says of itself, read from any JSON object without refusing a field:
/// its type, subtype, UUID, `signedDate` and addressee. `SignedDataVerifier` checks the
/// signature and the addressee on this alone, so a notification whose content this build cannot
/// read (`NotificationV2Payload` refuses it) is still known to be Apple's and this app's, and
/// can be kept as evidence.
///
/// A field of an unexpected type reads as absent here; a block that is not an object names no
/// bundle (and so no app). Only a payload that is not a JSON object is refused.
public struct NotificationEnvelope: Hashable, Sendable, Decodable {
    public var rawNotificationType: String?
    public var rawSubtype: String?
    public var notificationUUID: String?
    /// Milliseconds since 1970, UTC; a fraction is dropped.
    public var signedDate: Int64?
    public var addressee: NotificationAddressee

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        func string(_ key: String) -> String? { try? container.decodeIfPresent(String.self, forKey: AnyKey(key)) }
        func block(_ key: String) -> Naming? { try? container.decodeIfPresent(Naming.self, forKey: AnyKey(key)) }
        rawNotificationType = string("notificationType")
        rawSubtype = string("subtype")
        notificationUUID = string("notificationUUID")
        signedDate = try? container.decodeMillisecondsIfPresent(forKey: AnyKey("signedDate"))
        addressee = NotificationAddressee(
            data: block("data")?.named(environment: \.environment),
            summary: block("summary")?.named(environment: \.environment),
            externalPurchaseToken: block("externalPurchaseToken")?.named {
                NotificationAddressee.environment(ofExternalPurchaseId: $0.externalPurchaseId)
            },
            appData: block("appData")?.named(environment: \.environment))
    }

    /// One block's naming fields, each read only when it has the documented type.
    private struct Naming: Decodable {
        var bundleId: String?
        var appAppleId: Int64?
        var environment: String?
        var externalPurchaseId: String?

        init(from decoder: any Decoder) throws {
            guard let container = try? decoder.container(keyedBy: AnyKey.self) else { return }
            bundleId = try? container.decodeIfPresent(String.self, forKey: AnyKey("bundleId"))
            appAppleId = try? container.decodeIfPresent(Int64.self, forKey: AnyKey("appAppleId"))
            environment = try? container.decodeIfPresent(String.self, forKey: AnyKey("environment"))
            externalPurchaseId = try? container.decodeIfPresent(String.self, forKey: AnyKey("externalPurchaseId"))
        }

        /// What the block names, its environment read by `environment` (an external purchase
        /// token has none of its own).
        func named(environment reading: (Naming) -> String?) -> NotificationAddressee.Named {
            .init(bundleId: bundleId, appAppleId: appAppleId, rawEnvironment: reading(self))
        }
    }
}
