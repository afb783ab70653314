/// What the store checks of an offer once its signature passed (`OfferVerifier`): what it is
/// for, and whose.
extension SimulatorState {
    /// The app a purchase by `appleId` is in: the Apple ID's, fixed at its first purchase, else
    /// the one asked for, else the configured one.
    func purchaseBundleId(appleId: String, requested: String?) -> String {
        accounts[appleId]?.bundleId ?? requested ?? defaultBundleId
    }

    /// Offers are for auto-renewable subscriptions; a JWS's `transactionId` must name one of the
    /// customer's transactions, or their `appTransactionId` (which a customer with no purchase
    /// yet has too). Refusals are `.invalidOffer`.
    func check(_ offer: AcceptedOffer, appleId: String, product: SimulatedProduct, bundleId: String?) throws {
        guard product.kind == .autoRenewable else {
            throw SimulatorError(.invalidOffer, "\(product.productId) is not an auto-renewable subscription; offers are for those")
        }
        guard let claimed = offer.customerTransactionId else { return }
        let app = purchaseBundleId(appleId: appleId, requested: bundleId)
        let owned = accounts[appleId]?.transactionIds.contains(claimed) ?? false
        guard owned || claimed == SignedTransactionPayload.appTransactionId(appleId: appleId, bundleId: app) else {
            throw SimulatorError(.invalidOffer, "transactionId \(claimed) is not a transaction of this customer")
        }
    }
}
