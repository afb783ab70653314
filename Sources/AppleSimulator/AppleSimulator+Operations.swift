import AppStore
import Foundation
import Primitives

/// The device's and Apple's actions. Each mutates state under the lock, then posts the
/// notifications Apple would send, outside it.
extension AppleSimulator {
    /// Buys a product for a simulated Apple ID (created on first use in `environment`).
    ///
    /// - Parameters:
    ///   - quantity: units of a consumable; 1 otherwise.
    ///   - appAccountToken: the UUID the app passed to StoreKit (the ledger's order token).
    ///   - bundleId: the app, when not the configured one (for bundle-mismatch tests); fixed
    ///     per Apple ID at its first purchase.
    ///   - storefront: the App Store storefront (ISO 3166-1 alpha-3, `DEU`) the Apple ID buys
    ///     in from now on, signed into this transaction and its renewals; nil keeps the Apple
    ///     ID's (`USA` for a new one).
    ///   - offer: a promotional offer, or an introductory-offer eligibility, signed by the app's
    ///     server, as the app passes it to StoreKit. It is verified with the In-App Purchase
    ///     key's public half (`Configuration.serverAPI`); one the App Store would refuse throws
    ///     `SimulatorError.Code.invalidOffer` and buys nothing. See `OfferRedemption`.
    @discardableResult
    public func purchase(
        appleId: String, productId: String, environment: SimulatedEnvironment = .sandbox, quantity: Int = 1,
        appAccountToken: UUID? = nil, bundleId: String? = nil, storefront: String? = nil,
        offer: OfferRedemption? = nil
    ) async throws -> PurchaseResult {
        let verifier = try offer.map { _ in try OfferVerifier(configuration.serverAPI) }
        let outcome = try await perform { state in
            // Checked under the lock, so the 24 hours of a signature count to the purchase's now.
            var accepted: AcceptedOffer?
            if let offer, let verifier {
                accepted = try verifier.verify(
                    offer,
                    for: OfferVerifier.Purchase(
                        productId: productId, bundleId: state.purchaseBundleId(appleId: appleId, requested: bundleId),
                        appAccountToken: appAccountToken, nowMs: state.nowMs))
            }
            return try state.purchase(
                appleId: appleId, productId: productId, environment: environment, quantity: quantity,
                appAccountToken: appAccountToken, bundleId: bundleId, storefront: storefront, offer: accepted)
        }
        return try result(outcome)
    }

    /// Marks a transaction finished (`SKPaymentQueue.finishTransaction`): a finished consumable
    /// is absent from receipts issued afterwards.
    public func finish(transactionId: String) throws {
        try core.withLock { try $0.state.finish(transactionId) }
    }

    /// Refunds a transaction now (`cancellation_date_ms`; `reason` 0 other, 1 app issue) and
    /// sends REFUND (v1: REFUND, or CANCEL for an auto-renewable subscription).
    ///
    /// - Parameter revocationPercentage: the share refunded, in thousandths of a percent
    ///   (25000 is 25 %, 1...100000): below 100000 a prorated refund (`REFUND_PRORATED`); nil
    ///   refunds all of it (`REFUND_FULL`).
    @discardableResult
    public func refund(
        transactionId: String, reason: Int = 0, revocationPercentage: Int64? = nil
    ) async throws -> SimulatedTransaction {
        let outcome = try await perform {
            try $0.refund(transactionId, reason: reason, percentage: revocationPercentage)
        }
        return try outcome.transaction ?? transaction(transactionId)
    }

    /// Revokes a transaction now, as Family Sharing does when the purchaser stops sharing it:
    /// `revocationDate` set, no `revocationReason`, `revocationType` FAMILY_REVOKE; sends REVOKE.
    /// Revoking a subscription's current period ends the subscription.
    @discardableResult
    public func revoke(transactionId: String) async throws -> SimulatedTransaction {
        let outcome = try await perform { try $0.revoke(transactionId) }
        return try outcome.transaction ?? transaction(transactionId)
    }

    /// Reverses a refund Apple granted (REFUND_REVERSED): the purchase counts again.
    @discardableResult
    public func reverseRefund(transactionId: String) async throws -> SimulatedTransaction {
        let outcome = try await perform { try $0.reverseRefund(transactionId) }
        return try outcome.transaction ?? transaction(transactionId)
    }

    /// Plays a customer asking Apple for a refund: sends CONSUMPTION_REQUEST with
    /// `data.consumptionRequestReason` = `reason` (Apple's values: UNINTENDED_PURCHASE,
    /// FULFILLMENT_ISSUE, UNSATISFIED_WITH_PURCHASE, LEGAL, OTHER; any other is sent as given).
    /// The transaction is unchanged; `refund` plays Apple's decision.
    public func requestConsumption(transactionId: String, reason: String = "UNINTENDED_PURCHASE") async throws {
        _ = try await perform { try $0.requestConsumption(transactionId, reason: reason) }
    }

    /// Turns auto-renew off (the user cancelled in Settings) or back on.
    public func setAutoRenew(originalTransactionId: String, enabled: Bool) async throws {
        _ = try await perform { try $0.setAutoRenew(originalTransactionId, enabled: enabled) }
    }

    /// Moves the subscription to another product of its group: an upgrade happens now and
    /// returns the new purchase; a downgrade waits for the next renewal and returns nil.
    @discardableResult
    public func changeProduct(originalTransactionId: String, to productId: String) async throws -> PurchaseResult? {
        let outcome = try await perform { try $0.changeProduct(originalTransactionId, to: productId) }
        return outcome.transaction == nil ? nil : try result(outcome)
    }

    /// Makes renewals of the subscription fail (billing retry, then grace if the product has
    /// one) or succeed again; clearing during retry recovers now and returns the renewal.
    @discardableResult
    public func setBillingFails(originalTransactionId: String, _ fails: Bool) async throws -> SimulatedTransaction? {
        try await perform { try $0.setBillingFails(originalTransactionId, fails: fails) }.transaction
    }

    /// Advances the simulated clock, renewing, failing and expiring subscriptions on the way.
    /// - Returns: the simulated now afterwards, milliseconds since 1970 (UTC).
    @discardableResult
    public func advance(by duration: Duration) async throws -> Int64 {
        let milliseconds = Millis.of(duration)
        let settings = notificationSettings
        let notifications = try core.withLock { core in
            var built: [OutgoingNotification] = []
            // Mass extensions asked for before now run as the clock moves on, so a client that
            // waits rather than polls finds them done (AppleSimulator+MassExtensions).
            if milliseconds > 0 { built += completePendingMassExtensions(in: &core.state, settings: settings) }
            try core.state.advance(by: milliseconds) { state, event in
                built += buildNotifications(for: event, in: state, settings: settings)
            }
            return built
        }
        await deliver(notifications)
        return nowMilliseconds
    }

    /// Advances the simulated clock by whole days.
    @discardableResult
    public func advance(days: Int) async throws -> Int64 {
        try await advance(by: .seconds(Int64(days) * 86_400))
    }

    /// Issues the device a fresh receipt (`SKReceiptRefreshRequest`) and returns its receipt-data.
    ///
    /// Like Apple's refreshed receipts, its `in_app` lists every subscription renewal so far as
    /// well as the device's purchases; a receipt a later purchase issues lists device purchases
    /// only again.
    public func refreshReceipt(appleId: String) throws -> String {
        try core.withLock { _ = try $0.state.issueReceipt(for: appleId, refreshed: true) }
        return try receiptData(of: appleId)
    }

    /// Runs `operation` on the state, builds the notifications it caused while the state is
    /// exactly as they describe it, then delivers them.
    func perform(_ operation: (inout SimulatorState) throws -> PurchaseOutcome) async throws -> PurchaseOutcome {
        let settings = notificationSettings
        let (outcome, notifications) = try core.withLock { core in
            // Operations validate before they mutate, so a thrown error leaves the state as it was.
            let outcome = try operation(&core.state)
            let notifications = outcome.events.flatMap { buildNotifications(for: $0, in: core.state, settings: settings) }
            return (outcome, notifications)
        }
        await deliver(notifications)
        return outcome
    }

    /// The notifications for `event` as of `state`; one that cannot be built (signing failed)
    /// is logged and skipped: the store's own state is already committed, as Apple's would be.
    func buildNotifications(
        for event: NotificationEvent, in state: borrowing SimulatorState, settings: NotificationSettings
    ) -> [OutgoingNotification] {
        do {
            return try state.notifications(for: event, settings: settings, authority: certificateAuthority)
        } catch {
            logger.error("could not build notification", metadata: ["type": "\(event.v2Type)", "error": "\(error)"])
            return []
        }
    }

    private func result(_ outcome: PurchaseOutcome) throws -> PurchaseResult {
        guard let transaction = outcome.transaction else {
            throw SimulatorError(.invalidRequest, "the operation made no transaction")
        }
        let signed = try signedTransaction(transaction.transactionId)
        return PurchaseResult(transaction: transaction, receiptData: try receiptData(of: transaction.appleId), signedTransaction: signed)
    }
}
