/// The JSON bodies of Apple's verifyReceipt answer (iOS 7 style), encoded with snake_case keys.
///
/// Every scalar is a string, as Apple sends it (`"1466127148000"`, `"false"`), except `status`
/// and the receipt's numeric app ids, which Apple sends as JSON numbers (see the fixtures).
/// See https://developer.apple.com/documentation/appstorereceipts/responsebody
struct VerifyReceiptBody: Encodable, Sendable {
    var status: Int
    var environment: String?
    var receipt: ReceiptBody?
    var latestReceiptInfo: [TransactionBody]?
    var latestReceipt: String?
    var pendingRenewalInfo: [PendingRenewalBody]?
    /// Only with statuses 21100–21199: whether trying again may succeed.
    var isRetryable: Bool?

    enum CodingKeys: String, CodingKey {
        case status, environment, receipt, latestReceiptInfo, latestReceipt, pendingRenewalInfo
        case isRetryable = "is-retryable"
    }

    /// An answer carrying only a status, as Apple's errors do.
    static func status(_ status: Int, environment: SimulatedEnvironment? = nil) -> VerifyReceiptBody {
        VerifyReceiptBody(
            status: status, environment: environment?.rawValue, receipt: nil, latestReceiptInfo: nil,
            latestReceipt: nil, pendingRenewalInfo: nil, isRetryable: (21100...21199).contains(status) ? true : nil)
    }
}

/// `receipt`: the decoded receipt the device sent.
struct ReceiptBody: Encodable, Sendable {
    var receiptType: String
    var adamId: Int64
    var appItemId: Int64
    var bundleId: String
    var applicationVersion: String
    var downloadId: Int64
    var versionExternalIdentifier: Int64
    var receiptCreationDate: String
    var receiptCreationDateMs: String
    var receiptCreationDatePst: String
    var requestDate: String
    var requestDateMs: String
    var requestDatePst: String
    var originalPurchaseDate: String
    var originalPurchaseDateMs: String
    var originalPurchaseDatePst: String
    var originalApplicationVersion: String
    var inApp: [TransactionBody]
}

/// One item of `in_app` or `latest_receipt_info`.
/// See https://developer.apple.com/documentation/appstorereceipts/responsebody/latest_receipt_info
struct TransactionBody: Encodable, Sendable {
    var quantity: String
    var productId: String
    var transactionId: String
    var originalTransactionId: String
    var purchaseDate: String
    var purchaseDateMs: String
    var purchaseDatePst: String
    var originalPurchaseDate: String
    var originalPurchaseDateMs: String
    var originalPurchaseDatePst: String
    var expiresDate: String?
    var expiresDateMs: String?
    var expiresDatePst: String?
    var webOrderLineItemId: String?
    var isTrialPeriod: String
    var isInIntroOfferPeriod: String?
    var isUpgraded: String?
    var cancellationDate: String?
    var cancellationDateMs: String?
    var cancellationDatePst: String?
    var cancellationReason: String?
    var inAppOwnershipType: String
    var subscriptionGroupIdentifier: String?
    var appAccountToken: String?
    /// The promotional offer redeemed (`promotional_offer_id`); nil (omitted) without one.
    var promotionalOfferId: String?

    init(_ t: SimulatedTransaction) {
        quantity = String(t.quantity)
        productId = t.productId
        transactionId = t.transactionId
        originalTransactionId = t.originalTransactionId
        purchaseDate = AppleDateFormat.gmt(t.purchaseDateMs)
        purchaseDateMs = String(t.purchaseDateMs)
        purchaseDatePst = AppleDateFormat.pst(t.purchaseDateMs)
        originalPurchaseDate = AppleDateFormat.gmt(t.originalPurchaseDateMs)
        originalPurchaseDateMs = String(t.originalPurchaseDateMs)
        originalPurchaseDatePst = AppleDateFormat.pst(t.originalPurchaseDateMs)
        expiresDate = t.expiresDateMs.map(AppleDateFormat.gmt)
        expiresDateMs = t.expiresDateMs.map { String($0) }
        expiresDatePst = t.expiresDateMs.map(AppleDateFormat.pst)
        webOrderLineItemId = t.webOrderLineItemId
        isTrialPeriod = String(t.isTrialPeriod)
        isInIntroOfferPeriod = t.kind == .autoRenewable ? String(t.isInIntroOfferPeriod) : nil
        isUpgraded = t.isUpgraded ? "true" : nil
        cancellationDate = t.cancellationDateMs.map(AppleDateFormat.gmt)
        cancellationDateMs = t.cancellationDateMs.map { String($0) }
        cancellationDatePst = t.cancellationDateMs.map(AppleDateFormat.pst)
        cancellationReason = t.cancellationReason.map { String($0) }
        inAppOwnershipType = "PURCHASED"
        subscriptionGroupIdentifier = t.subscriptionGroup
        appAccountToken = t.appAccountToken?.uuidString.lowercased()
        promotionalOfferId = t.offerType == AcceptedOffer.promotionalOfferType ? t.offerIdentifier : nil
    }
}

/// One item of `pending_renewal_info`: what will happen at the subscription's next renewal.
/// See https://developer.apple.com/documentation/appstorereceipts/responsebody/pending_renewal_info
struct PendingRenewalBody: Encodable, Sendable {
    var autoRenewProductId: String
    var originalTransactionId: String
    var productId: String
    var autoRenewStatus: String
    var expirationIntent: String?
    var isInBillingRetryPeriod: String?
    var gracePeriodExpiresDate: String?
    var gracePeriodExpiresDateMs: String?
    var gracePeriodExpiresDatePst: String?

    init(_ s: SimulatedSubscription) {
        autoRenewProductId = s.autoRenewProductId
        originalTransactionId = s.originalTransactionId
        productId = s.productId
        autoRenewStatus = s.autoRenewEnabled ? "1" : "0"
        expirationIntent = s.expirationIntent.map { String($0) }
        // Apple sends the flag once a renewal has failed, and "0" again after the retry ends.
        isInBillingRetryPeriod = s.expirationIntent == 2 || s.billingRetrySinceMs != nil
            ? (s.billingRetrySinceMs != nil ? "1" : "0") : nil
        gracePeriodExpiresDate = s.gracePeriodExpiresDateMs.map(AppleDateFormat.gmt)
        gracePeriodExpiresDateMs = s.gracePeriodExpiresDateMs.map { String($0) }
        gracePeriodExpiresDatePst = s.gracePeriodExpiresDateMs.map(AppleDateFormat.pst)
    }
}
