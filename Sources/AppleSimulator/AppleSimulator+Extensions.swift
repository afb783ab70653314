import Foundation

/// Extend a Subscription Renewal Date, answered from the state, and what tests read back of
/// every extension granted.
/// See https://developer.apple.com/documentation/appstoreserverapi/extend-a-subscription-renewal-date
extension AppleSimulator {
    /// Every renewal-date extension granted so far, single and mass, oldest first.
    public var renewalExtensions: [RenewalExtension] { core.withLock { $0.state.renewalExtensions.granted } }

    /// Every mass extension request so far, in the order made, with its progress.
    public var massRenewalExtensions: [MassRenewalExtension] {
        core.withLock { $0.state.renewalExtensions.massExtensions }
    }

    /// Extend a Subscription Renewal Date: extends the subscription now, posts RENEWAL_EXTENDED
    /// (v2; v1 had no such type), then answers Apple's `ExtendRenewalDateResponse`.
    ///
    /// Like the simulator's other operations it posts before it answers, where Apple answers
    /// first; a repeated `requestIdentifier` answers the first grant and posts nothing.
    func serverAPIExtendRenewalDate(_ originalTransactionId: String, body: Data, bundleId: String) async throws -> Data {
        let request = try RenewalExtensionRequest(validating: body, mass: false)
        let settings = notificationSettings
        let (granted, notifications) = try core.withLock { core in
            let (grant, events) = try core.state.extendRenewalDate(
                originalTransactionId, request: request, bundleId: bundleId)
            return (grant, events.flatMap { buildNotifications(for: $0, in: core.state, settings: settings) })
        }
        await deliver(notifications)
        return try AppleJSON.camelCaseData(
            ServerAPIBody.ExtendRenewalDate(
                originalTransactionId: granted.originalTransactionId, webOrderLineItemId: granted.webOrderLineItemId,
                success: true, effectiveDate: granted.effectiveDateMs))
    }
}
