/// The JSON of an App Store Server Notification v1 (deprecated by Apple, still sent by the
/// simulator because the ledger accepts it), encoded with snake_case keys.
/// See https://developer.apple.com/documentation/appstoreservernotifications/responsebodyv1
struct NotificationV1Body: Encodable, Sendable {
    struct UnifiedReceipt: Encodable, Sendable {
        var status: Int
        var environment: String
        var latestReceipt: String?
        var latestReceiptInfo: [TransactionBody]
        var pendingRenewalInfo: [PendingRenewalBody]
    }

    var notificationType: String
    /// The app's shared secret, by which the ledger authenticates v1 notifications.
    var password: String
    /// "PROD" or "Sandbox".
    var environment: String
    var bid: String
    var bvrs: String
    var originalTransactionId: String
    var autoRenewStatus: String?
    var autoRenewProductId: String?
    /// Only on DID_CHANGE_RENEWAL_STATUS: when the user turned auto-renew on or off.
    var autoRenewStatusChangeDate: String?
    var autoRenewStatusChangeDateMs: String?
    var autoRenewStatusChangeDatePst: String?
    var cancellationDate: String?
    var cancellationDateMs: String?
    var cancellationDatePst: String?
    var unifiedReceipt: UnifiedReceipt
}
