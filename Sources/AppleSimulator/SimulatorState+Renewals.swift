/// Subscription life after the purchase: plan changes, auto-renew, billing, and what happens as
/// simulated time passes.
extension SimulatorState {
    /// Apple retries a failed renewal for up to 60 days before the subscription expires.
    static let billingRetryMs: Int64 = 60 * dayMs

    /// Changes the plan within the group. A higher level of service (lower `groupLevel`) is an
    /// upgrade: immediate, the old transaction marked `is_upgraded` with a cancellation date, a
    /// new transaction under the same `original_transaction_id`. Otherwise the change waits for
    /// the next renewal (`auto_renew_product_id`), as Apple does with downgrades.
    mutating func changeProduct(_ originalTransactionId: String, to productId: String) throws -> PurchaseOutcome {
        var subscription = try self.subscription(originalTransactionId)
        let target = try self.product(productId)
        let current = try self.product(subscription.productId)
        guard target.kind == .autoRenewable, (target.subscriptionGroup ?? target.productId) == subscription.subscriptionGroup
        else {
            throw SimulatorError(.invalidRequest, "\(productId) is not in group \(subscription.subscriptionGroup)")
        }
        guard subscription.isActive(at: nowMs), !subscription.hasEnded else {
            throw SimulatorError(.invalidRequest, "subscription \(originalTransactionId) is not active; purchase again")
        }
        var latest = try self.transaction(subscription.latestTransactionId)
        let isUpgrade = (target.groupLevel ?? Int.max) < (current.groupLevel ?? Int.max)
        guard isUpgrade else {
            subscription.autoRenewProductId = productId
            subscriptions[originalTransactionId] = subscription
            let subtype = productId == subscription.productId ? nil : "DOWNGRADE"
            return PurchaseOutcome(
                transaction: nil, receiptNumber: nil,
                events: [event("DID_CHANGE_RENEWAL_PREF", "DID_CHANGE_RENEWAL_PREF", subtype, latest)])
        }
        latest.isUpgraded = true
        latest.cancellationDateMs = nowMs
        transactions[latest.transactionId] = latest
        markModified(latest.transactionId)

        // An upgrade starts a new run of periods today, as Apple's upgrades do.
        var upgrade = makePeriod(
            of: subscription, product: target, startingAt: nowMs,
            expiringAt: target.billingPeriod.end(after: 1, from: nowMs), reason: "PURCHASE", onDevice: true)
        upgrade.bill(target, period: 1, anchorMs: nowMs)
        record(upgrade)
        subscription.productId = productId
        subscription.autoRenewProductId = productId
        subscription.latestTransactionId = upgrade.transactionId
        subscription.expiresDateMs = upgrade.expiresDateMs ?? nowMs
        subscription.periodAnchorMs = nowMs
        subscription.periodsSinceAnchor = 1
        subscription.renewalShiftMs = 0
        subscription.commitment = upgrade.commitment
        subscriptions[originalTransactionId] = subscription
        let receipt = try issueReceipt(for: subscription.appleId)
        return PurchaseOutcome(
            transaction: upgrade, receiptNumber: receipt,
            events: [event("INTERACTIVE_RENEWAL", "DID_CHANGE_RENEWAL_PREF", "UPGRADE", upgrade)])
    }

    /// Turns auto-renew on or off (the user's choice in Settings).
    mutating func setAutoRenew(_ originalTransactionId: String, enabled: Bool) throws -> PurchaseOutcome {
        var subscription = try self.subscription(originalTransactionId)
        guard !subscription.hasEnded else {
            throw SimulatorError(.invalidRequest, "subscription \(originalTransactionId) has ended; purchase again")
        }
        guard subscription.autoRenewEnabled != enabled else {
            return PurchaseOutcome(transaction: nil, receiptNumber: nil, events: [])
        }
        subscription.autoRenewEnabled = enabled
        subscriptions[originalTransactionId] = subscription
        let latest = try self.transaction(subscription.latestTransactionId)
        let subtype = enabled ? "AUTO_RENEW_ENABLED" : "AUTO_RENEW_DISABLED"
        return PurchaseOutcome(
            transaction: nil, receiptNumber: nil,
            events: [event("DID_CHANGE_RENEWAL_STATUS", "DID_CHANGE_RENEWAL_STATUS", subtype, latest)])
    }

    /// Makes the Apple ID's payment method fail (or work again). Clearing it during billing
    /// retry recovers the subscription at once: a new period starts now, and the renewal date
    /// moves to the recovery date, as Apple's does.
    mutating func setBillingFails(_ originalTransactionId: String, fails: Bool) throws -> PurchaseOutcome {
        var subscription = try self.subscription(originalTransactionId)
        subscription.billingFails = fails
        subscriptions[originalTransactionId] = subscription
        guard !fails, subscription.billingRetrySinceMs != nil, !subscription.hasEnded else {
            return PurchaseOutcome(transaction: nil, receiptNumber: nil, events: [])
        }
        let renewal = try renew(originalTransactionId, at: nowMs, restartingPeriods: true)
        return PurchaseOutcome(
            transaction: renewal, receiptNumber: nil,
            events: [event("DID_RECOVER", "DID_RENEW", "BILLING_RECOVERY", renewal)])
    }

    /// Moves the simulated clock forward by `milliseconds`, renewing, failing and expiring
    /// subscriptions at the instants they fall due, in order.
    ///
    /// `observe` sees each event with the state as it is at that instant (clock included), so
    /// a notification's `signedDate`, status and receipt are those of its moment, not of the end.
    mutating func advance(
        by milliseconds: Int64, observe: (borrowing SimulatorState, NotificationEvent) -> Void
    ) throws {
        guard milliseconds >= 0 else { throw SimulatorError(.invalidRequest, "the clock only moves forward") }
        let target = nowMs + milliseconds
        var queue = DueQueue(subscriptions.values.filter { !$0.hasEnded }.map { (Self.due($0), $0.originalTransactionId) })
        // Each step either renews (moving expiry at least a day on) or ends a subscription, so
        // the bound is only a guard against a product with an absurd period.
        for _ in 0..<10_000_000 {
            guard let (due, id) = queue.first, due <= target else { break }
            queue.popFirst()
            nowMs = max(nowMs, due)
            for event in try fallDue(id) { observe(self, event) }
            if let subscription = subscriptions[id], !subscription.hasEnded {
                queue.push(Self.due(subscription), id)
            }
        }
        nowMs = target
    }

    /// When the subscription next needs Apple's attention: the end of its grace period, then
    /// of its billing retry, if retrying; else the end of its paid period.
    private static func due(_ subscription: SimulatedSubscription) -> Int64 {
        subscription.pendingGraceExpiry
            ?? subscription.billingRetrySinceMs.map { $0 + billingRetryMs } ?? subscription.expiresDateMs
    }

    private mutating func fallDue(_ originalTransactionId: String) throws -> [NotificationEvent] {
        var subscription = try self.subscription(originalTransactionId)
        let latest = try self.transaction(subscription.latestTransactionId)
        if let graceEnd = subscription.pendingGraceExpiry, graceEnd <= nowMs {
            // Access ends; Apple keeps retrying the charge until the retry period is over.
            subscription.gracePeriodExpiryNotified = true
            subscriptions[originalTransactionId] = subscription
            return [event(nil, "GRACE_PERIOD_EXPIRED", nil, latest)]
        }
        if subscription.billingRetrySinceMs != nil {
            subscription.leaveBillingRetry()
            subscription.hasEnded = true
            subscriptions[originalTransactionId] = subscription
            return [event(nil, "EXPIRED", "BILLING_RETRY", latest)]
        }
        if !subscription.autoRenewEnabled {
            subscription.expirationIntent = 1
            subscription.hasEnded = true
            subscriptions[originalTransactionId] = subscription
            return [event(nil, "EXPIRED", "VOLUNTARY", latest)]
        }
        if subscription.billingFails {
            let grace = try product(subscription.autoRenewProductId).gracePeriodDays
            subscription.billingRetrySinceMs = subscription.expiresDateMs
            subscription.gracePeriodExpiresDateMs = grace.map { subscription.expiresDateMs + Int64($0) * Self.dayMs }
            subscription.expirationIntent = 2
            subscriptions[originalTransactionId] = subscription
            let subtype = grace == nil ? nil : "GRACE_PERIOD"
            return [event("DID_FAIL_TO_RENEW", "DID_FAIL_TO_RENEW", subtype, latest)]
        }
        let renewal = try renew(originalTransactionId, at: subscription.expiresDateMs, restartingPeriods: false)
        return [event("DID_RENEW", "DID_RENEW", nil, renewal)]
    }

    /// Bills the next period of the auto-renew product, starting at `startMs`.
    ///
    /// The period continues the current run (same anchor, one period more) unless
    /// `restartingPeriods` or the new product's period differs (a downgrade from yearly to
    /// monthly): then a new run starts at `startMs`.
    private mutating func renew(
        _ originalTransactionId: String, at startMs: Int64, restartingPeriods: Bool
    ) throws -> SimulatedTransaction {
        var subscription = try self.subscription(originalTransactionId)
        let product = try self.product(subscription.autoRenewProductId)
        let continues = !restartingPeriods && products[subscription.productId]?.billingPeriod == product.billingPeriod
        if !continues {
            subscription.periodAnchorMs = startMs
            subscription.periodsSinceAnchor = 0
            subscription.renewalShiftMs = 0
        }
        subscription.periodsSinceAnchor += 1
        // Extensions granted during the run move every later period end by as much.
        let expiresMs =
            product.billingPeriod.end(after: subscription.periodsSinceAnchor, from: subscription.periodAnchorMs)
            + subscription.renewalShiftMs
        var renewal = makePeriod(
            of: subscription, product: product, startingAt: startMs, expiringAt: expiresMs, reason: "RENEWAL",
            onDevice: false)
        // A commitment billed monthly: the next instalment, or the first of a new commitment.
        renewal.bill(product, period: subscription.periodsSinceAnchor, anchorMs: subscription.periodAnchorMs)
        renewal.commitment?.commitmentExpiresDateMs += subscription.renewalShiftMs
        record(renewal)
        subscription.productId = product.productId
        subscription.latestTransactionId = renewal.transactionId
        subscription.expiresDateMs = expiresMs
        subscription.leaveBillingRetry()
        subscription.expirationIntent = nil
        subscription.commitment = renewal.commitment
        subscriptions[originalTransactionId] = subscription
        return renewal
    }

    /// A paid period of `product` for the subscription: new transaction and line item ids,
    /// same original transaction id.
    private mutating func makePeriod(
        of subscription: SimulatedSubscription, product: SimulatedProduct, startingAt startMs: Int64,
        expiringAt expiresMs: Int64, reason: String, onDevice: Bool
    ) -> SimulatedTransaction {
        let original = transactions[subscription.originalTransactionId]
        // Billed where the Apple ID buys now, in that storefront's currency.
        let storefront = accounts[subscription.appleId]?.storefront ?? SimulatedStorefront.defaultCountry
        let price = PriceTerritory.equivalentPrice(of: product, in: storefront)
        return SimulatedTransaction(
            transactionId: newTransactionId(subscription.environment),
            originalTransactionId: subscription.originalTransactionId,
            webOrderLineItemId: newWebOrderLineItemId(), appleId: subscription.appleId,
            environment: subscription.environment, bundleId: original?.bundleId ?? defaultBundleId,
            productId: product.productId, kind: .autoRenewable, quantity: 1, purchaseDateMs: startMs,
            originalPurchaseDateMs: original?.purchaseDateMs ?? startMs, expiresDateMs: expiresMs,
            isTrialPeriod: false, isInIntroOfferPeriod: false, isUpgraded: false, cancellationDateMs: nil,
            cancellationReason: nil, isFinished: false, isDevicePurchase: onDevice,
            appAccountToken: original?.appAccountToken, subscriptionGroup: subscription.subscriptionGroup,
            priceMilliunits: price.milliunits, currency: price.currency, transactionReason: reason,
            orderId: newOrderId(), storefront: storefront)
    }
}
