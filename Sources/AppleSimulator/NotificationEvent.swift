/// Something happened that Apple tells the app's server about: the input of both notification
/// formats. v1 names (`notification_type`) and v2 names (`notificationType`, `subtype`) are
/// Apple's; a nil v1 type means v1 had no such notification.
struct NotificationEvent: Sendable, Hashable {
    var v1Type: String?
    var v2Type: String
    var v2Subtype: String?
    /// The transaction the notification is about (v2 `signedTransactionInfo`).
    var transactionId: String
    var appleId: String
    var environment: SimulatedEnvironment
    /// v2 `data.consumptionRequestReason` of a CONSUMPTION_REQUEST, e.g. "UNINTENDED_PURCHASE".
    var consumptionRequestReason: String? = nil
}
