import Foundation

/// Which of Apple's notification formats: v1 JSON or v2 `{"signedPayload"}`.
public enum NotificationVersion: String, Sendable, Codable, CaseIterable {
    case v1
    case v2
}

/// A notification the simulator built and (when a URL is configured) posted.
public struct OutgoingNotification: Sendable, Codable, Hashable {
    public var version: NotificationVersion
    /// v1 `notification_type` or v2 `notificationType`, e.g. "DID_RENEW".
    public var notificationType: String
    /// v2 `subtype`, e.g. "AUTO_RENEW_DISABLED"; nil for v1 and for types without one.
    public var subtype: String?
    /// The transaction it is about.
    public var transactionId: String
    /// The exact JSON body posted.
    public var body: String
    /// HTTP status the receiver answered; nil when not sent or the post failed.
    public var responseStatus: Int?
    /// Why the post failed, if it did (never the body).
    public var deliveryError: String?
    /// v2 only: the JWS posted as `signedPayload`; nil for v1.
    public var signedPayload: String?
    /// The environment it is about (v2 `data.environment`): App Store Server API answers are
    /// per environment.
    public var environment: SimulatedEnvironment
    /// When it was built and posted on the simulated clock (v2 `signedDate`), milliseconds since
    /// 1970 (UTC); the `attemptDate` of its send attempt in Get Notification History.
    public var sentAtMs: Int64
    /// Apple's `sendAttemptResult` for the post: "SUCCESS", "UNSUCCESSFUL_HTTP_RESPONSE_CODE",
    /// "TIMED_OUT", "PREMATURE_CLOSE" or "NO_RESPONSE"; nil when it was not posted (no URL).
    /// See https://developer.apple.com/documentation/appstoreserverapi/sendattemptresult
    public var sendAttemptResult: String?
}

/// What the simulator needs besides its state to build notifications.
struct NotificationSettings: Sendable {
    var versions: Set<NotificationVersion>
    var sharedSecret: String
    var appAppleId: Int64
    var bundleVersion: String
    var verify: VerifyReceiptSettings
}

extension SimulatorState {
    /// The bodies Apple would post for `event`, v1 (when v1 had such a type) then v2.
    func notifications(
        for event: NotificationEvent, settings: NotificationSettings, authority: SimulatorCertificateAuthority
    ) throws -> [OutgoingNotification] {
        let transaction = try transaction(event.transactionId)
        let subscription = subscriptions[transaction.originalTransactionId]
        var result: [OutgoingNotification] = []
        if settings.versions.contains(.v1), let v1Type = event.v1Type {
            let unified = unifiedReceipt(appleId: event.appleId, excludeOldTransactions: false, settings: settings.verify)
            let statusChange = v1Type == "DID_CHANGE_RENEWAL_STATUS" ? nowMs : nil
            let body = NotificationV1Body(
                notificationType: v1Type, password: settings.sharedSecret,
                environment: event.environment.notificationV1Name, bid: transaction.bundleId,
                bvrs: settings.bundleVersion, originalTransactionId: transaction.originalTransactionId,
                autoRenewStatus: subscription.map { String($0.autoRenewEnabled) },
                autoRenewProductId: subscription?.autoRenewProductId,
                autoRenewStatusChangeDate: statusChange.map(AppleDateFormat.gmt),
                autoRenewStatusChangeDateMs: statusChange.map { String($0) },
                autoRenewStatusChangeDatePst: statusChange.map(AppleDateFormat.pst),
                cancellationDate: transaction.cancellationDateMs.map(AppleDateFormat.gmt),
                cancellationDateMs: transaction.cancellationDateMs.map { String($0) },
                cancellationDatePst: transaction.cancellationDateMs.map(AppleDateFormat.pst),
                unifiedReceipt: .init(
                    status: 0, environment: event.environment.rawValue, latestReceipt: unified.latestReceipt,
                    latestReceiptInfo: unified.latestReceiptInfo, pendingRenewalInfo: unified.pendingRenewalInfo))
            result.append(
                OutgoingNotification(
                    version: .v1, notificationType: v1Type, subtype: nil, transactionId: transaction.transactionId,
                    body: try AppleJSON.snakeCase(body), responseStatus: nil, deliveryError: nil,
                    signedPayload: nil, environment: event.environment, sentAtMs: nowMs, sendAttemptResult: nil))
        }
        if settings.versions.contains(.v2) {
            let signedRenewal = try subscription.map { s in
                try authority.sign(
                    SignedRenewalInfoPayload(
                        s, renewalProduct: products[s.autoRenewProductId],
                        storefront: accounts[s.appleId]?.storefront ?? SimulatedStorefront.defaultCountry,
                        startMs: transactions[s.originalTransactionId]?.purchaseDateMs ?? transaction.purchaseDateMs,
                        signedDate: nowMs))
            }
            let payload = NotificationV2Payload(
                notificationType: event.v2Type, subtype: event.v2Subtype,
                notificationUUID: UUID().uuidString.lowercased(),
                data: .init(
                    appAppleId: settings.appAppleId, bundleId: transaction.bundleId,
                    bundleVersion: settings.bundleVersion, environment: event.environment.rawValue,
                    signedTransactionInfo: try authority.sign(SignedTransactionPayload(transaction, signedDate: nowMs)),
                    signedRenewalInfo: signedRenewal, status: subscription.map(subscriptionStatus),
                    consumptionRequestReason: event.consumptionRequestReason),
                version: "2.0", signedDate: nowMs)
            let signedPayload = try authority.sign(payload)
            let body = try AppleJSON.camelCase(["signedPayload": signedPayload])
            result.append(
                OutgoingNotification(
                    version: .v2, notificationType: event.v2Type, subtype: event.v2Subtype,
                    transactionId: transaction.transactionId, body: body, responseStatus: nil, deliveryError: nil,
                    signedPayload: signedPayload, environment: event.environment, sentAtMs: nowMs,
                    sendAttemptResult: nil))
        }
        return result
    }

    /// Apple's subscription `status`: 1 active, 2 expired, 3 billing retry, 4 grace, 5 revoked.
    func subscriptionStatus(_ s: SimulatedSubscription) -> Int {
        if s.isRevoked { return 5 }
        if s.billingRetrySinceMs != nil {
            if let grace = s.gracePeriodExpiresDateMs, nowMs < grace { return 4 }
            return 3
        }
        return s.isActive(at: nowMs) ? 1 : 2
    }
}
