/// Renewal-date extensions, as Apple grants them to compensate subscribers for an outage:
/// the current period's end (and with it every later renewal date) moves by the days granted.
///
/// Apple refuses (HTTP 403) a subscription that has expired, is in billing retry (grace
/// period included) or in a free offer period (4030004), and one already extended twice in
/// the last 365 days (4030005). The simulator has no Family Sharing, so never answers 4030007.
/// See https://developer.apple.com/documentation/appstoreserverapi/extending-the-renewal-date-for-auto-renewable-subscriptions
extension SimulatorState {
    /// The window Apple counts extensions in.
    static let extensionWindowMs: Int64 = 365 * dayMs
    /// Extensions Apple grants a subscription within the window.
    static let maximumExtensionsPerWindow = 2

    /// Extend a Subscription Renewal Date: extends the subscription now and returns what was
    /// granted and the RENEWAL_EXTENDED to send. A `requestIdentifier` already granted to this
    /// subscription answers that grant again, extending nothing and sending nothing, as Apple's
    /// does.
    ///
    /// An id that is not a number is 400 4000008; one that names no subscription of this app
    /// (a renewal's id included) is 404 4040005.
    mutating func extendRenewalDate(
        _ originalTransactionId: String, request: RenewalExtensionRequest, bundleId: String
    ) throws -> (granted: RenewalExtension, events: [NotificationEvent]) {
        guard !originalTransactionId.isEmpty, originalTransactionId.utf8.allSatisfy({ (48...57).contains($0) }) else {
            throw ServerAPIError.invalidOriginalTransactionId
        }
        guard let subscription = subscriptions[originalTransactionId],
            transactions[originalTransactionId]?.bundleId == bundleId
        else { throw ServerAPIError.originalTransactionIdNotFound }
        if let earlier = renewalExtensions.grantedExtension(
            originalTransactionId, requestIdentifier: request.requestIdentifier)
        {
            return (earlier, [])
        }
        let (granted, event) = try extend(subscription, as: request, massProductId: nil)
        return (granted, [event])
    }

    /// Records a mass extension request to run later (`runMassExtension`). The same
    /// `requestIdentifier` for the same product again changes nothing, as Apple's does. A
    /// product that is not an auto-renewable subscription of the catalog is 400 4000023.
    mutating func requestMassExtension(_ request: RenewalExtensionRequest, environment: SimulatedEnvironment, bundleId: String) throws {
        guard let product = products[request.productId], product.kind == .autoRenewable else {
            throw ServerAPIError.invalidProductId
        }
        guard renewalExtensions.massIndex(productId: product.productId, requestIdentifier: request.requestIdentifier) == nil
        else { return }
        renewalExtensions.massExtensions.append(
            MassRenewalExtension(
                requestIdentifier: request.requestIdentifier, bundleId: bundleId, productId: product.productId,
                extendByDays: request.extendByDays, extendReasonCode: request.extendReasonCode,
                storefrontCountryCodes: request.storefrontCountryCodes, environment: environment, requestedAtMs: nowMs,
                statusCalls: 0, completeDateMs: nil, succeededCount: 0, failedCount: 0))
    }

    /// Counts one Get Status call on a mass extension and says whether it is now due to run:
    /// pending, and asked more than `incompleteCalls` times. Unknown: 404 4040009.
    mutating func countMassExtensionStatusCall(
        productId: String, requestIdentifier: String, bundleId: String, incompleteCalls: Int
    ) throws -> (index: Int, isDue: Bool) {
        guard let index = renewalExtensions.massIndex(productId: productId, requestIdentifier: requestIdentifier),
            renewalExtensions.massExtensions[index].bundleId == bundleId
        else {
            throw ServerAPIError.statusRequestNotFound
        }
        renewalExtensions.massExtensions[index].statusCalls += 1
        let mass = renewalExtensions.massExtensions[index]
        return (index, !mass.isComplete && mass.statusCalls > max(incompleteCalls, 0))
    }

    /// Runs a pending mass extension now, over every subscription of its product in its
    /// environment (and storefronts, when limited) that has not ended, for this app: each one
    /// that qualifies is extended (RENEWAL_EXTENDED), each one that does not counts as failed
    /// (RENEWAL_EXTENSION, subtype FAILURE, about its latest transaction). Returns those
    /// events, in the order of the original transaction ids; the SUMMARY is the caller's.
    mutating func runMassExtension(at index: Int) -> [NotificationEvent] {
        var mass = renewalExtensions.massExtensions[index]
        guard !mass.isComplete else { return [] }
        let request = RenewalExtensionRequest(
            extendByDays: mass.extendByDays, extendReasonCode: mass.extendReasonCode,
            requestIdentifier: mass.requestIdentifier, productId: mass.productId,
            storefrontCountryCodes: mass.storefrontCountryCodes)
        let storefronts = mass.storefrontCountryCodes.map { Set($0) }
        let covered = subscriptions.values.filter { s in
            guard s.productId == mass.productId, s.environment == mass.environment, !s.hasEnded,
                transactions[s.originalTransactionId]?.bundleId == mass.bundleId
            else { return false }
            let storefront = accounts[s.appleId]?.storefront ?? SimulatedStorefront.defaultCountry
            return storefronts?.contains(storefront) ?? true
        }
        // Ids of one environment have one length, so string order is numeric order.
        var events: [NotificationEvent] = []
        for subscription in covered.sorted(by: { $0.originalTransactionId < $1.originalTransactionId }) {
            do {
                let (_, event) = try extend(subscription, as: request, massProductId: mass.productId)
                events.append(event)
                mass.succeededCount += 1
            } catch {
                mass.failedCount += 1
                if let latest = transactions[subscription.latestTransactionId] {
                    events.append(self.event(nil, "RENEWAL_EXTENSION", "FAILURE", latest))
                }
            }
        }
        mass.completeDateMs = nowMs
        renewalExtensions.massExtensions[index] = mass
        return events
    }

    /// The places of the mass extensions still pending, oldest first.
    var pendingMassExtensions: [Int] {
        renewalExtensions.massExtensions.indices.filter { !renewalExtensions.massExtensions[$0].isComplete }
    }

    /// Moves the end of the subscription's current period by the days asked, if it qualifies:
    /// its latest transaction shows the new `expiresDate`, the renewal info the new
    /// `renewalDate`, and the renewals after it count from there (`renewalShiftMs`).
    private mutating func extend(
        _ subscription: SimulatedSubscription, as request: RenewalExtensionRequest, massProductId: String?
    ) throws -> (RenewalExtension, NotificationEvent) {
        try checkExtensible(subscription)
        var subscription = subscription
        var latest = try transaction(subscription.latestTransactionId)
        let shift = Int64(request.extendByDays) * Self.dayMs
        subscription.expiresDateMs += shift
        subscription.renewalShiftMs += shift
        // A commitment billed monthly ends as much later as its periods do.
        subscription.commitment?.commitmentExpiresDateMs += shift
        latest.expiresDateMs = subscription.expiresDateMs
        latest.commitment?.commitmentExpiresDateMs += shift
        transactions[latest.transactionId] = latest
        markModified(latest.transactionId)
        subscriptions[subscription.originalTransactionId] = subscription
        let granted = RenewalExtension(
            originalTransactionId: subscription.originalTransactionId, webOrderLineItemId: latest.webOrderLineItemId,
            requestIdentifier: request.requestIdentifier, extendByDays: request.extendByDays,
            extendReasonCode: request.extendReasonCode, effectiveDateMs: subscription.expiresDateMs,
            grantedAtMs: nowMs, massExtensionProductId: massProductId)
        renewalExtensions.granted.append(granted)
        return (granted, event(nil, "RENEWAL_EXTENDED", nil, latest))
    }

    /// Apple's refusals, in its order: a subscription not in a paid period now (ended, revoked,
    /// in billing retry or grace, past its end, or in its free trial) is 4030004; one extended
    /// twice in the last 365 days is 4030005.
    private func checkExtensible(_ subscription: SimulatedSubscription) throws {
        guard !subscription.hasEnded, !subscription.isRevoked, subscription.billingRetrySinceMs == nil,
            nowMs < subscription.expiresDateMs,
            let latest = transactions[subscription.latestTransactionId], !latest.isTrialPeriod
        else { throw ServerAPIError.subscriptionExtensionIneligible }
        let recent = renewalExtensions.count(
            of: subscription.originalTransactionId, grantedAfter: nowMs - Self.extensionWindowMs)
        guard recent < Self.maximumExtensionsPerWindow else { throw ServerAPIError.subscriptionMaxExtension }
    }
}
