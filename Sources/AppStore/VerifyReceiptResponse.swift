import Foundation
import Primitives

/// A decoded verifyReceipt response body, iOS 7 or iOS 6 style.
///
/// A body with a non-zero status may still carry a receipt (21003, 21006, 21007 in the fixtures):
/// it is decoded, and `status` decides whether it may be used. Dates are milliseconds since 1970,
/// UTC. Fields not modelled are kept in `unknownFields`.
/// https://developer.apple.com/documentation/appstorereceipts/responsebody
public struct VerifyReceiptResponse: Hashable, Sendable, Decodable {
    /// `status`: 0 when valid; see `VerifyReceiptStatus`.
    public var status: VerifyReceiptStatus
    /// `environment` as sent (`Production`, `Sandbox`); absent in iOS 6 style bodies.
    public var environmentRaw: String?
    /// `is-retryable`: for 21100–21199, whether trying again may succeed.
    public var isRetryable: Bool?
    /// `receipt`: the receipt that was sent, decoded.
    public var receipt: Receipt?
    /// `latest_receipt_info`: every transaction of the customer's subscriptions (iOS 7: an array,
    /// not sorted; iOS 6 and v1 notifications: one object, read as a one-element array).
    public var latestReceiptInfo: [ReceiptTransaction]
    /// `latest_expired_receipt_info` (iOS 6 style): the last transaction of an expired
    /// subscription, as a one-element array for uniformity; empty when absent.
    public var latestExpiredReceiptInfo: [ReceiptTransaction]
    /// `pending_renewal_info`: one item per subscription (iOS 7).
    public var pendingRenewalInfo: [PendingRenewalInfo]
    /// `latest_receipt`: base64 of the newest receipt. Sensitive: never log it.
    public var latestReceipt: String?
    /// iOS 6 style top-level renewal fields: `auto_renew_status`, `auto_renew_product_id`,
    /// `expiration_intent`, `is_in_billing_retry_period`.
    public var autoRenewStatus: Bool?
    public var autoRenewProductID: String?
    public var expirationIntentRaw: String?
    public var isInBillingRetryPeriod: Bool?
    /// Every other field, as sent.
    public var unknownFields: [String: JSONValue]

    /// `environment`, typed; nil when absent or unknown.
    public var environment: AppStoreEnvironment? { environmentRaw.flatMap(AppStoreEnvironment.init(appleValue:)) }

    /// `expiration_intent` (iOS 6 style top level), typed.
    public var expirationIntent: ExpirationIntent? {
        expirationIntentRaw.flatMap(Int.init).flatMap(ExpirationIntent.init(rawValue:))
    }

    /// The bundle id of the receipt, whichever style (`bundle_id` or `bid`).
    public var bundleID: String? { receipt?.bundleID }

    /// Every transaction the body mentions, `in_app` first, then `latest_receipt_info`, then
    /// `latest_expired_receipt_info`; duplicates kept (Apple repeats transactions across them).
    public var allTransactions: [ReceiptTransaction] {
        (receipt?.inApp ?? []) + latestReceiptInfo + latestExpiredReceiptInfo
    }

    /// Decodes a body; a body that is not JSON, or has no integer `status`, is a
    /// `.malformedBody` error whose text quotes nothing from the body.
    public init(jsonBytes: Data) throws(AppStoreError) {
        do {
            self = try JSONDecoder().decode(VerifyReceiptResponse.self, from: jsonBytes)
        } catch {
            throw AppStoreError.malformedBody("verifyReceipt response", error)
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        var status: Int64?
        latestReceiptInfo = []
        latestExpiredReceiptInfo = []
        pendingRenewalInfo = []
        unknownFields = [:]
        for key in c.allKeys {
            switch key.stringValue {
            case "status": status = try c.lenientInt64(key)
            case "environment": environmentRaw = try c.lenientString(key)
            case "is-retryable", "is_retryable": isRetryable = try c.lenientBool(key)
            case "receipt": receipt = try c.decodeIfPresent(Receipt.self, forKey: key)
            case "latest_receipt_info": latestReceiptInfo = try c.oneOrMany(key)
            case "latest_expired_receipt_info": latestExpiredReceiptInfo = try c.oneOrMany(key)
            case "pending_renewal_info": pendingRenewalInfo = try c.decodeIfPresent([PendingRenewalInfo].self, forKey: key) ?? []
            case "latest_receipt": latestReceipt = try c.lenientString(key)
            case "auto_renew_status": autoRenewStatus = try c.lenientBool(key)
            case "auto_renew_product_id": autoRenewProductID = try c.lenientString(key)
            case "expiration_intent": expirationIntentRaw = try c.lenientString(key)
            case "is_in_billing_retry_period": isInBillingRetryPeriod = try c.lenientBool(key)
            default: unknownFields[key.stringValue] = try c.json(key)
            }
        }
        guard let status, let code = Int(exactly: status) else { throw c.missing("status") }
        self.status = VerifyReceiptStatus(rawValue: code)
    }
}

extension KeyedDecodingContainer where Key == AnyKey {
    /// Apple's `latest_receipt_info` is an array in iOS 7 bodies and one object in iOS 6 bodies
    /// and old v1 notifications: both read as an array.
    func oneOrMany(_ key: AnyKey) throws -> [ReceiptTransaction] {
        if try decodeNil(forKey: key) { return [] }
        // Probe the shape first, so an error inside an element is reported as itself.
        if (try? nestedUnkeyedContainer(forKey: key)) != nil {
            return try decode([ReceiptTransaction].self, forKey: key)
        }
        return [try decode(ReceiptTransaction.self, forKey: key)]
    }
}
