import Foundation

/// Set App Account Token: the app's server gives an original transaction (a purchase made
/// outside the app, say) the UUID that names its customer.
/// See https://developer.apple.com/documentation/appstoreserverapi/set-app-account-token
extension SimulatorState {
    /// Sets `token` on every transaction of `originalTransactionId` (the original, its renewals,
    /// upgrades and re-subscriptions), so they sign it from now on, and so do later renewals,
    /// which copy the original's. Each counts as changed for transaction history.
    ///
    /// An id that is not a number is 400 4000006; unknown or of another app 404 4040010; a
    /// transaction that is not an original one (a renewal) 400 4000187. The simulator has no
    /// Family Sharing, so never answers 4000185.
    mutating func setAppAccountToken(_ token: UUID, originalTransactionId: String, bundleId: String) throws {
        let (account, transaction) = try customer(owning: originalTransactionId, bundleId: bundleId)
        guard transaction.transactionId == transaction.originalTransactionId else {
            throw ServerAPIError.transactionIdNotOriginalTransactionId
        }
        for id in account.transactionIds {
            guard var member = transactions[id], member.originalTransactionId == originalTransactionId else { continue }
            member.appAccountToken = token
            transactions[id] = member
            markModified(id)
        }
        appAccountTokensSet += 1
    }
}
