import AppStore
import Primitives

/// What Apple's answer proves, distilled from a verifyReceipt body, a signed transaction or a
/// notification: the app it is for, the environment, and each transaction once.
public struct Evidence: Sendable, Hashable {
    /// `bundle_id` (or iOS 6 `bid`); nil when Apple's answer names none.
    public var bundleId: String?
    /// `Production` or `Sandbox`.
    public var environment: String
    /// Every transaction, merged by `transaction_id` (Apple repeats them across `in_app` and
    /// `latest_receipt_info`), in the order first seen.
    public var entries: [EvidenceEntry]
    /// Renewal information per `original_transaction_id`.
    public var renewals: [String: RenewalObservation]

    public init(bundleId: String?, environment: String, entries: [EvidenceEntry], renewals: [String: RenewalObservation] = [:]) {
        self.bundleId = bundleId
        self.environment = environment
        self.entries = []
        self.renewals = renewals
        for entry in entries { merge(entry) }
    }

    public func entry(_ transactionId: String) -> EvidenceEntry? { entries.first { $0.transactionId == transactionId } }

    /// Adds an entry, or completes the one with the same transaction id: a date or flag that one
    /// copy has and the other lacks is kept, and a device purchase stays one.
    public mutating func merge(_ entry: EvidenceEntry) {
        guard let index = entries.firstIndex(where: { $0.transactionId == entry.transactionId }) else {
            entries.append(entry)
            return
        }
        var existing = entries[index]
        existing.expiresDateMs = existing.expiresDateMs ?? entry.expiresDateMs
        existing.cancellationDateMs = existing.cancellationDateMs ?? entry.cancellationDateMs
        existing.cancellationReason = existing.cancellationReason ?? entry.cancellationReason
        existing.isUpgraded = existing.isUpgraded || entry.isUpgraded
        existing.isRevocation = existing.isRevocation || entry.isRevocation
        existing.rawRevocationType = existing.rawRevocationType ?? entry.rawRevocationType
        existing.revocationPercentage = existing.revocationPercentage ?? entry.revocationPercentage
        existing.isTrial = existing.isTrial || entry.isTrial
        existing.inApp = existing.inApp || entry.inApp
        existing.appAccountToken = existing.appAccountToken ?? entry.appAccountToken
        existing.purchaseDateMs = existing.purchaseDateMs ?? entry.purchaseDateMs
        existing.storefront = existing.storefront ?? entry.storefront
        existing.rawBillingPlanType = existing.rawBillingPlanType ?? entry.rawBillingPlanType
        existing.commitment = Commitment.merged(existing.commitment, entry.commitment)
        entries[index] = existing
    }
}

/// One transaction in Apple's answer. Dates are milliseconds since 1970, UTC.
public struct EvidenceEntry: Sendable, Hashable {
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    public var quantity: Int64
    public var purchaseDateMs: Int64?
    public var expiresDateMs: Int64?
    public var cancellationDateMs: Int64?
    public var cancellationReason: Int?
    /// True for a Family Sharing revocation rather than a refund (signed data only).
    public var isRevocation: Bool
    public var isTrial: Bool
    public var isUpgraded: Bool
    /// Lower-case UUID, nil when empty.
    public var appAccountToken: String?
    public var appTransactionId: String?
    /// Apple's price in milliunits (signed data only).
    public var priceMilliunits: Int64?
    public var currency: String?
    /// Listed in the receipt's `in_app` (made on the device or restored), as opposed to only in
    /// `latest_receipt_info`.
    public var inApp: Bool
    /// A family member's access through Family Sharing (`FAMILY_SHARED`): delivered, but the
    /// purchaser's own transaction carries the money.
    public var isFamilyShared: Bool
    /// Apple's `revocationType` as sent (`REFUND_FULL`, `REFUND_PRORATED`, `FAMILY_REVOKE`, or a
    /// value Apple adds later); signed data only. See `revocationType`.
    /// https://developer.apple.com/documentation/appstoreserverapi/revocationtype
    public var rawRevocationType: String?
    /// Apple's `revocationPercentage`: the share refunded, in thousandths of a percent (25000 is
    /// 25%); nil when Apple states none (receipts never do). Signed data only.
    public var revocationPercentage: Int64?
    /// The storefront's country, ISO 3166-1 alpha-3 (`USA`), checked by `Storefront.countryCode`;
    /// signed data only (a receipt has none). nil when absent or not three upper-case letters.
    public var storefront: String?
    /// Apple's `billingPlanType` as sent (`BILLED_UPFRONT`, `MONTHLY`, or a value Apple adds
    /// later); signed data only. See `billingPlanType`.
    public var rawBillingPlanType: String?
    /// Where the transaction stands in a commitment (`commitmentInfo`); signed data only.
    public var commitment: Commitment?
    /// Which offer priced it: the signed transaction's `offerIdentifier`, a receipt's
    /// `promotional_offer_id`; a promotional offer's links the purchase to the signature the
    /// ledger issued for it.
    public var offerIdentifier: String?

    /// `rawRevocationType`, typed; nil when absent or a value this build does not know.
    public var revocationType: RevocationType? { rawRevocationType.flatMap(RevocationType.init(rawValue:)) }
    /// `rawBillingPlanType`, typed; nil when absent or a value this build does not know.
    public var billingPlanType: BillingPlanType? { rawBillingPlanType.flatMap(BillingPlanType.init(rawValue:)) }

    public init(
        transactionId: String, originalTransactionId: String, productId: String, quantity: Int64 = 1,
        purchaseDateMs: Int64? = nil, expiresDateMs: Int64? = nil, cancellationDateMs: Int64? = nil, cancellationReason: Int? = nil,
        isRevocation: Bool = false, isTrial: Bool = false, isUpgraded: Bool = false, appAccountToken: String? = nil,
        appTransactionId: String? = nil, priceMilliunits: Int64? = nil, currency: String? = nil, inApp: Bool = true,
        isFamilyShared: Bool = false, rawRevocationType: String? = nil, revocationPercentage: Int64? = nil,
        storefront: String? = nil, rawBillingPlanType: String? = nil, commitment: Commitment? = nil, offerIdentifier: String? = nil
    ) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.quantity = quantity
        self.purchaseDateMs = purchaseDateMs
        self.expiresDateMs = expiresDateMs
        self.cancellationDateMs = cancellationDateMs
        self.cancellationReason = cancellationReason
        self.isRevocation = isRevocation
        self.isTrial = isTrial
        self.isUpgraded = isUpgraded
        self.appAccountToken = appAccountToken
        self.appTransactionId = appTransactionId
        self.priceMilliunits = priceMilliunits
        self.currency = currency
        self.inApp = inApp
        self.isFamilyShared = isFamilyShared
        self.rawRevocationType = rawRevocationType
        self.revocationPercentage = revocationPercentage
        self.storefront = storefront
        self.rawBillingPlanType = rawBillingPlanType
        self.commitment = commitment
        self.offerIdentifier = offerIdentifier
    }

    /// Refunded or revoked (an upgrade also sets `cancellation_date`, but is no refund).
    public var isRefunded: Bool { cancellationDateMs != nil && !isUpgraded }

    /// Ended early because its subscriber upgraded (`isUpgraded` with a revocation date): access
    /// goes on under the new plan; Apple may refund the unused share (`revocationPercentage`).
    public var isUpgradedAway: Bool { cancellationDateMs != nil && isUpgraded }

    /// As a subscription entry for `SubscriptionObserved`.
    public var subscriptionEntry: SubscriptionEntry {
        SubscriptionEntry(
            transactionId: transactionId, productId: productId, purchaseDateMs: purchaseDateMs, expiresDateMs: expiresDateMs,
            cancellationDateMs: cancellationDateMs, isTrial: isTrial, isUpgraded: isUpgraded,
            billingPlanType: rawBillingPlanType, commitment: commitment, priceMilliunits: priceMilliunits, currency: currency)
    }
}

extension Evidence {
    /// The evidence of a verifyReceipt body (iOS 7 or iOS 6 style): `in_app`, then
    /// `latest_receipt_info` and `latest_expired_receipt_info`, and `pending_renewal_info`.
    public init(response: VerifyReceiptResponse, environmentFallback: String) {
        let environment = response.environment?.rawValue ?? environmentFallback
        let inApp = (response.receipt?.inApp ?? []).map { EvidenceEntry($0, inApp: true) }
        let latest = (response.latestReceiptInfo + response.latestExpiredReceiptInfo).map { EvidenceEntry($0, inApp: false) }
        let observedAt = response.receipt?.requestDate ?? response.receipt?.creationDate ?? 0
        var renewals: [String: RenewalObservation] = [:]
        for info in response.pendingRenewalInfo {
            guard let id = info.originalTransactionID else { continue }
            renewals[id] = RenewalObservation(
                observedAtMs: observedAt, autoRenew: info.autoRenewStatus, autoRenewProductId: info.autoRenewProductID,
                inBillingRetry: info.isInBillingRetryPeriod, gracePeriodExpiresMs: info.gracePeriodExpiresDate)
        }
        self.init(bundleId: response.bundleID, environment: environment, entries: inApp + latest, renewals: renewals)
    }

    /// The evidence of one verified signed transaction (StoreKit 2, or a v2 notification's).
    public init(signed transaction: SignedTransaction) {
        self.init(
            bundleId: transaction.bundleId, environment: transaction.environment?.rawValue ?? transaction.rawEnvironment ?? "Production",
            entries: transaction.transactionId == nil || transaction.productId == nil ? [] : [EvidenceEntry(signed: transaction)])
    }
}

extension EvidenceEntry {
    public init(_ t: ReceiptTransaction, inApp: Bool) {
        self.init(
            transactionId: t.transactionID, originalTransactionId: t.originalTransactionID ?? t.transactionID,
            productId: t.productID, quantity: max(1, t.quantity), purchaseDateMs: t.purchaseDate, expiresDateMs: t.expiresDate,
            cancellationDateMs: t.cancellationDate, cancellationReason: t.cancellationReasonRaw.flatMap { Int($0) },
            isTrial: t.isTrialPeriod ?? false, isUpgraded: t.isUpgraded ?? false,
            appAccountToken: t.appAccountToken.flatMap { $0.isEmpty ? nil : $0.lowercased() }, inApp: inApp,
            isFamilyShared: t.inAppOwnershipType == .familyShared, offerIdentifier: t.promotionalOfferID.flatMap { $0.isEmpty ? nil : $0 })
    }

    public init(signed t: SignedTransaction) {
        self.init(
            transactionId: t.transactionId ?? "", originalTransactionId: t.originalTransactionId ?? t.transactionId ?? "",
            productId: t.productId ?? "", quantity: max(1, t.quantity ?? 1), purchaseDateMs: t.purchaseDate,
            expiresDateMs: t.expiresDate, cancellationDateMs: t.revocationDate, cancellationReason: t.rawRevocationReason,
            isRevocation: t.revocationType == .familyRevoke,
            // A free trial says so in `offerDiscountType`; older payloads only by a zero price.
            isTrial: t.offerType == .introductory && (t.offerDiscountType == .freeTrial || t.price == 0),
            isUpgraded: t.isUpgraded ?? false,
            appAccountToken: t.appAccountToken.flatMap { $0.isEmpty ? nil : $0.lowercased() },
            appTransactionId: t.appTransactionId,
            // A currency that is not ISO 4217 is no money: price and currency are dropped together
            // (the signed body stays on record verbatim), and revenue falls back to the catalog.
            priceMilliunits: t.currency.map(ISO4217.isCode) == true ? t.price : nil,
            currency: t.currency.flatMap { ISO4217.isCode($0) ? $0 : nil }, inApp: true,
            isFamilyShared: t.inAppOwnershipType == .familyShared,
            rawRevocationType: t.rawRevocationType, revocationPercentage: t.revocationPercentage,
            // Like the currency: anything but three upper-case letters is no country.
            storefront: Storefront.countryCode(t.storefront),
            // Kept as Apple sent them, a plan this build does not know included.
            rawBillingPlanType: t.rawBillingPlanType, commitment: Commitment.of(t.commitmentInfo),
            offerIdentifier: t.offerIdentifier.flatMap { $0.isEmpty ? nil : $0 })
    }
}

extension Evidence {
    /// Adds what a verified signed renewal info shows of its subscription (notifications v2 and
    /// Get All Subscription Statuses), observed at its `signedDate`, else at `fallbackMs`.
    public mutating func observe(_ renewal: SignedRenewalInfo, fallbackMs: Int64) {
        guard let original = renewal.originalTransactionId else { return }
        renewals[original] = RenewalObservation(
            observedAtMs: renewal.signedDate ?? fallbackMs, autoRenew: renewal.autoRenewStatus.map { $0 == 1 },
            autoRenewProductId: renewal.autoRenewProductId, inBillingRetry: renewal.isInBillingRetryPeriod,
            gracePeriodExpiresMs: renewal.gracePeriodExpiresDate)
    }
}
