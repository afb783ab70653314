import Foundation
import Primitives

/// An App Store Server Notification, version 1 (JSON; deprecated by Apple but still sent to apps
/// configured for it).
///
/// Authenticity is the `password` field, which must equal our shared secret (`isAuthentic`).
/// Older notifications carry `latest_receipt_info` as one object at the top level; newer ones a
/// `unified_receipt` shaped like a verifyReceipt body. Dates are milliseconds since 1970, UTC.
/// `description` leaves out the password and receipts.
/// https://developer.apple.com/documentation/appstoreservernotifications/responsebodyv1
public struct NotificationV1: Hashable, Sendable, Decodable, CustomStringConvertible {
    /// `notification_type` as sent (`INITIAL_BUY`, `DID_RENEW`, `CANCEL`, ...).
    public var notificationType: String
    /// `password`: the shared secret as the App Store knows it. Sensitive.
    public var password: String?
    /// `environment` as sent: `PROD` or `Sandbox`.
    public var environmentRaw: String?
    /// `auto_renew_status` (`"true"`/`"false"`).
    public var autoRenewStatus: Bool?
    public var autoRenewProductID: String?
    /// `auto_renew_status_change_date_ms`: milliseconds since 1970, UTC.
    public var autoRenewStatusChangeDate: Int64?
    /// `bid`, `bvrs`: the app's bundle id and version.
    public var bundleID: String?
    public var bundleVersion: String?
    /// Top-level `original_transaction_id`, `web_order_line_item_id` (some types only).
    public var originalTransactionID: String?
    public var webOrderLineItemID: String?
    /// Top-level `cancellation_date_ms` (CANCEL): milliseconds since 1970, UTC.
    public var cancellationDate: Int64?
    /// `unified_receipt`: the customer's latest receipt data, shaped like a verifyReceipt body.
    public var unifiedReceipt: VerifyReceiptResponse?
    /// Top-level `latest_receipt_info` (old shape: one object), as an array.
    public var latestReceiptInfo: [ReceiptTransaction]
    /// Top-level `latest_expired_receipt_info` (old shape), as an array.
    public var latestExpiredReceiptInfo: [ReceiptTransaction]
    /// `latest_receipt` / `latest_expired_receipt`: base64 receipts. Sensitive.
    public var latestReceipt: String?
    public var latestExpiredReceipt: String?
    /// Every other field, as sent.
    public var unknownFields: [String: JSONValue]

    public var environment: AppStoreEnvironment? { environmentRaw.flatMap(AppStoreEnvironment.init(appleValue:)) }

    /// The transactions this notification is about: `unified_receipt.latest_receipt_info` when
    /// present, else the top-level `latest_receipt_info` and `latest_expired_receipt_info`.
    public var transactions: [ReceiptTransaction] {
        if let unified = unifiedReceipt, !unified.latestReceiptInfo.isEmpty { return unified.latestReceiptInfo }
        return latestReceiptInfo + latestExpiredReceiptInfo
    }

    /// True when `password` equals `sharedSecret`, compared in constant time.
    public func isAuthentic(sharedSecret: String) -> Bool {
        guard let password, !sharedSecret.isEmpty else { return false }
        return ConstantTime.equal(password.utf8, sharedSecret.utf8)
    }

    /// Decodes a notification body; a body that is not the documented JSON is `.malformedBody`.
    public init(jsonBytes: Data) throws(AppStoreError) {
        do {
            self = try JSONDecoder().decode(NotificationV1.self, from: jsonBytes)
        } catch {
            throw AppStoreError.malformedBody("v1 notification", error)
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        var type: String?
        latestReceiptInfo = []
        latestExpiredReceiptInfo = []
        unknownFields = [:]
        for key in c.allKeys {
            switch key.stringValue {
            case "notification_type": type = try c.lenientString(key)
            case "password": password = try c.lenientString(key)
            case "environment": environmentRaw = try c.lenientString(key)
            case "auto_renew_status": autoRenewStatus = try c.lenientBool(key)
            case "auto_renew_product_id": autoRenewProductID = try c.lenientString(key)
            case "auto_renew_status_change_date_ms": autoRenewStatusChangeDate = try c.lenientInt64(key)
            case "bid": bundleID = try c.lenientString(key)
            case "bvrs": bundleVersion = try c.lenientString(key)
            case "original_transaction_id": originalTransactionID = try c.lenientString(key)
            case "web_order_line_item_id": webOrderLineItemID = try c.lenientString(key)
            case "cancellation_date_ms": cancellationDate = try c.lenientInt64(key)
            case "unified_receipt": unifiedReceipt = try c.decodeIfPresent(VerifyReceiptResponse.self, forKey: key)
            case "latest_receipt_info": latestReceiptInfo = try c.oneOrMany(key)
            case "latest_expired_receipt_info": latestExpiredReceiptInfo = try c.oneOrMany(key)
            case "latest_receipt": latestReceipt = try c.lenientString(key)
            case "latest_expired_receipt": latestExpiredReceipt = try c.lenientString(key)
            case "auto_renew_status_change_date", "auto_renew_status_change_date_pst",
                 "cancellation_date", "cancellation_date_pst":
                continue
            default: unknownFields[key.stringValue] = try c.json(key)
            }
        }
        guard let type else { throw c.missing("notification_type") }
        notificationType = type
    }

    public var description: String {
        "NotificationV1(\(notificationType), environment: \(environmentRaw ?? "none"), bid: \(bundleID ?? "none"), "
            + "transactions: \(transactions.count))"
    }
}
