import Foundation

/// What a device-side operation produced: the new transaction (if any), the receipt the device
/// now holds, and what Apple notifies the app's server about.
struct PurchaseOutcome: Sendable {
    var transaction: SimulatedTransaction?
    var receiptNumber: Int?
    var events: [NotificationEvent]
}

extension SimulatorState {
    /// Buys `productId` for `appleId` at the simulated now, as StoreKit would on the device.
    ///
    /// An auto-renewable bought while the Apple ID has no subscription in its group starts one
    /// (with the product's free trial if it has one); bought after the group's subscription
    /// lapsed, it re-subscribes under the same `original_transaction_id`, as Apple does.
    /// `storefront` (ISO 3166-1 alpha-3), when given, moves the Apple ID to that storefront
    /// first: this purchase and the renewals after it are signed with it, and priced in it
    /// (`PriceTerritory.equivalentPrice`).
    ///
    /// `offer`, already verified (`OfferVerifier`), redeems a promotional offer (the
    /// transaction signs `offerType` 2 and its `offerIdentifier`, and gets no free trial) or
    /// withholds the free trial when an introductory-offer eligibility said so.
    mutating func purchase(
        appleId: String, productId: String, environment: SimulatedEnvironment, quantity: Int,
        appAccountToken: UUID?, bundleId: String?, storefront: String? = nil, offer: AcceptedOffer? = nil
    ) throws -> PurchaseOutcome {
        let product = try self.product(productId)
        if let storefront, !SimulatedStorefront.isCountryCode(storefront) {
            throw SimulatorError(.invalidRequest, "storefront is an ISO 3166-1 alpha-3 code such as USA, not \(storefront)")
        }
        if let offer { try check(offer, appleId: appleId, product: product, bundleId: bundleId) }
        var account = try self.account(appleId, environment: environment, bundleId: bundleId)
        guard quantity >= 1 else { throw SimulatorError(.invalidRequest, "quantity must be at least 1") }
        if let storefront {
            account.storefront = storefront
            accounts[appleId] = account
        }
        // Charged in the storefront's currency at the product's tier there (`equivalentPrice`).
        let price = PriceTerritory.equivalentPrice(of: product, in: account.storefront)
        var transaction = SimulatedTransaction(
            transactionId: newTransactionId(environment), originalTransactionId: "", webOrderLineItemId: nil,
            appleId: appleId, environment: environment, bundleId: account.bundleId, productId: productId,
            kind: product.kind, quantity: quantity, purchaseDateMs: nowMs, originalPurchaseDateMs: nowMs,
            expiresDateMs: nil, isTrialPeriod: false, isInIntroOfferPeriod: false, isUpgraded: false,
            cancellationDateMs: nil, cancellationReason: nil, isFinished: false, isDevicePurchase: true,
            appAccountToken: appAccountToken, subscriptionGroup: nil,
            priceMilliunits: price.milliunits * Int64(quantity), currency: price.currency,
            transactionReason: "PURCHASE", orderId: newOrderId(), storefront: account.storefront)
        transaction.originalTransactionId = transaction.transactionId
        var events: [NotificationEvent] = []

        if product.kind == .autoRenewable {
            // A promotional offer takes the place of the introductory one, as on a device.
            let allowsTrial = offer.map { $0.allowsIntroductoryOffer && $0.promotionalOfferIdentifier == nil } ?? true
            events = try startSubscription(&transaction, product: product, allowsTrial: allowsTrial)
            if let offerIdentifier = offer?.promotionalOfferIdentifier {
                transaction.offerType = AcceptedOffer.promotionalOfferType
                transaction.offerIdentifier = offerIdentifier
            }
        } else {
            if product.kind == .nonConsumable, ownsUnrefunded(appleId: appleId, productId: productId) {
                throw SimulatorError(.alreadyOwned, "\(appleId) already owns \(productId)")
            }
            events = [event(nil, "ONE_TIME_CHARGE", nil, transaction)]
        }
        record(transaction)
        let receipt = try issueReceipt(for: appleId)
        return PurchaseOutcome(transaction: transaction, receiptNumber: receipt, events: events)
    }

    private func ownsUnrefunded(appleId: String, productId: String) -> Bool {
        accounts[appleId]?.transactionIds.contains { id in
            guard let t = transactions[id] else { return false }
            return t.productId == productId && t.cancellationDateMs == nil
        } ?? false
    }

    /// Fills in the subscription fields of a new purchase and creates or revives the group's
    /// subscription record.
    private mutating func startSubscription(
        _ transaction: inout SimulatedTransaction, product: SimulatedProduct, allowsTrial: Bool
    ) throws -> [NotificationEvent] {
        let group = product.subscriptionGroup ?? product.productId
        transaction.subscriptionGroup = group
        transaction.webOrderLineItemId = newWebOrderLineItemId()
        let firstPeriodEnd = product.billingPeriod.end(after: 1, from: nowMs)

        if let existing = subscriptions(of: transaction.appleId).first(where: { $0.subscriptionGroup == group }) {
            guard !existing.isActive(at: nowMs) || existing.hasEnded else {
                throw SimulatorError(
                    .alreadySubscribed,
                    "\(transaction.appleId) is subscribed in group \(group); change the product instead")
            }
            // Re-subscription: Apple keeps the group's original transaction id; no new trial,
            // and the renewal dates count from today.
            transaction.originalTransactionId = existing.originalTransactionId
            transaction.originalPurchaseDateMs =
                transactions[existing.originalTransactionId]?.purchaseDateMs ?? nowMs
            transaction.expiresDateMs = firstPeriodEnd
            transaction.bill(product, period: 1, anchorMs: nowMs)
            var revived = existing
            revived.productId = product.productId
            revived.autoRenewProductId = product.productId
            revived.autoRenewEnabled = true
            revived.latestTransactionId = transaction.transactionId
            revived.expiresDateMs = firstPeriodEnd
            revived.periodAnchorMs = nowMs
            revived.periodsSinceAnchor = 1
            revived.renewalShiftMs = 0
            revived.leaveBillingRetry()
            revived.expirationIntent = nil
            revived.isRevoked = false
            revived.hasEnded = false
            revived.commitment = transaction.commitment
            subscriptions[existing.originalTransactionId] = revived
            return [event("INTERACTIVE_RENEWAL", "SUBSCRIBED", "RESUBSCRIBE", transaction)]
        }

        // Paid periods count from the end of the free trial, or from now without one.
        let anchorMs: Int64
        if allowsTrial, let trialDays = product.trialDays, trialDays > 0 {
            transaction.isTrialPeriod = true
            transaction.priceMilliunits = 0
            anchorMs = nowMs + Int64(trialDays) * Self.dayMs
            transaction.expiresDateMs = anchorMs
        } else {
            transaction.expiresDateMs = firstPeriodEnd
            anchorMs = nowMs
            // The first paid period is the commitment's first instalment (a trial is none).
            transaction.bill(product, period: 1, anchorMs: anchorMs)
        }
        subscriptionIdsByAppleId[transaction.appleId, default: []].append(transaction.originalTransactionId)
        subscriptions[transaction.originalTransactionId] = SimulatedSubscription(
            originalTransactionId: transaction.originalTransactionId, appleId: transaction.appleId,
            environment: transaction.environment, subscriptionGroup: group, productId: product.productId,
            autoRenewProductId: product.productId, autoRenewEnabled: true,
            latestTransactionId: transaction.transactionId, expiresDateMs: transaction.expiresDateMs ?? nowMs,
            periodAnchorMs: anchorMs, periodsSinceAnchor: transaction.isTrialPeriod ? 0 : 1,
            billingFails: false, billingRetrySinceMs: nil, gracePeriodExpiresDateMs: nil,
            gracePeriodExpiryNotified: false, expirationIntent: nil,
            isRevoked: false, hasEnded: false, commitment: transaction.commitment)
        return [event("INITIAL_BUY", "SUBSCRIBED", "INITIAL_BUY", transaction)]
    }

    /// What Apple tells the app's server about `transaction`: v1 `notification_type` (nil when
    /// v1 had none), v2 `notificationType` and `subtype`.
    func event(_ v1: String?, _ v2: String, _ subtype: String?, _ transaction: SimulatedTransaction) -> NotificationEvent {
        NotificationEvent(
            v1Type: v1, v2Type: v2, v2Subtype: subtype, transactionId: transaction.transactionId,
            appleId: transaction.appleId, environment: transaction.environment)
    }
}
