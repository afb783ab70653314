import Foundation

/// The payload of a RENEWAL_EXTENSION notification with subtype SUMMARY: no `data`, a
/// `summary` instead, as Apple's `ResponseBodyV2DecodedPayload`.
/// See https://developer.apple.com/documentation/appstoreservernotifications/summary
struct MassExtensionSummaryPayload: Encodable, Sendable {
    struct Summary: Encodable, Sendable {
        var environment: String
        var appAppleId: Int64
        var bundleId: String
        var productId: String
        var requestIdentifier: String
        /// The storefronts the request was limited to; nil (omitted) when it was not.
        var storefrontCountryCodes: [String]?
        var succeededCount: Int64
        var failedCount: Int64
    }

    var notificationType = "RENEWAL_EXTENSION"
    var subtype = "SUMMARY"
    var notificationUUID: String
    var summary: Summary
    var version = "2.0"
    var signedDate: Int64
}

/// Extend Subscription Renewal Dates for All Active Subscribers and Get Status of Subscription
/// Renewal Date Extensions.
///
/// A request is recorded, not run: it runs at the status call after
/// `Configuration.massExtensionIncompleteStatusCalls` calls answered `complete: false`, or
/// when the simulated clock next moves forward (`advance`), or at `completeMassExtensions()`,
/// whichever comes first, all at once at that simulated instant. Running it posts
/// RENEWAL_EXTENDED for each subscription extended, RENEWAL_EXTENSION FAILURE for each one
/// that did not qualify, then RENEWAL_EXTENSION SUMMARY.
/// See https://developer.apple.com/documentation/appstoreserverapi/extend-subscription-renewal-dates-for-all-active-subscribers
extension AppleSimulator {
    /// Runs every pending mass extension now and returns every mass extension request.
    @discardableResult
    public func completeMassExtensions() async -> [MassRenewalExtension] {
        let settings = notificationSettings
        let (all, notifications) = core.withLock { core in
            let built = completePendingMassExtensions(in: &core.state, settings: settings)
            return (core.state.renewalExtensions.massExtensions, built)
        }
        await deliver(notifications)
        return all
    }

    /// Extend Subscription Renewal Dates for All Active Subscribers: checks and records the
    /// request, and answers its `requestIdentifier`.
    ///
    /// - Parameter environment: whose subscriptions it extends. Not Apple's: the simulator
    ///   serves both environments on one URL, so the route takes it from `?environment=`.
    func serverAPIMassExtendRenewalDate(body: Data, environment: SimulatedEnvironment, bundleId: String) throws -> Data {
        let request = try RenewalExtensionRequest(validating: body, mass: true)
        try core.withLock { try $0.state.requestMassExtension(request, environment: environment, bundleId: bundleId) }
        return try AppleJSON.camelCaseData(ServerAPIBody.MassExtendRenewalDate(requestIdentifier: request.requestIdentifier))
    }

    /// Get Status of Subscription Renewal Date Extensions: counts the call, runs the request
    /// if this call makes it due, and answers its progress.
    func serverAPIMassExtensionStatus(productId: String, requestIdentifier: String, bundleId: String) async throws -> Data {
        guard RenewalExtensionRequest.isValid(requestIdentifier: requestIdentifier) else {
            throw ServerAPIError.invalidRequestIdentifier
        }
        let settings = notificationSettings
        let incompleteCalls = configuration.massExtensionIncompleteStatusCalls
        let (mass, notifications) = try core.withLock { core in
            let (index, isDue) = try core.state.countMassExtensionStatusCall(
                productId: productId, requestIdentifier: requestIdentifier, bundleId: bundleId, incompleteCalls: incompleteCalls)
            let built = isDue ? completeMassExtension(at: index, in: &core.state, settings: settings) : []
            return (core.state.renewalExtensions.massExtensions[index], built)
        }
        await deliver(notifications)
        return try AppleJSON.camelCaseData(ServerAPIBody.MassExtendRenewalDateStatus(mass))
    }

    /// Runs every pending mass extension in `state` now; the notifications to post, in order.
    func completePendingMassExtensions(
        in state: inout SimulatorState, settings: NotificationSettings
    ) -> [OutgoingNotification] {
        var built: [OutgoingNotification] = []
        for index in state.pendingMassExtensions {
            built += completeMassExtension(at: index, in: &state, settings: settings)
        }
        return built
    }

    /// Runs one mass extension and builds its notifications: one per subscription covered,
    /// then the SUMMARY (v2 only, as the type is).
    private func completeMassExtension(
        at index: Int, in state: inout SimulatorState, settings: NotificationSettings
    ) -> [OutgoingNotification] {
        let events = state.runMassExtension(at: index)
        var built = events.flatMap { buildNotifications(for: $0, in: state, settings: settings) }
        if settings.versions.contains(.v2) {
            let mass = state.renewalExtensions.massExtensions[index]
            do {
                built.append(try summaryNotification(of: mass, at: state.nowMs, settings: settings))
            } catch {
                logger.error("could not build notification", metadata: ["type": "RENEWAL_EXTENSION", "error": "\(error)"])
            }
        }
        return built
    }

    private func summaryNotification(
        of mass: MassRenewalExtension, at now: Int64, settings: NotificationSettings
    ) throws -> OutgoingNotification {
        let payload = MassExtensionSummaryPayload(
            notificationUUID: UUID().uuidString.lowercased(),
            summary: .init(
                environment: mass.environment.rawValue, appAppleId: settings.appAppleId, bundleId: mass.bundleId,
                productId: mass.productId, requestIdentifier: mass.requestIdentifier,
                storefrontCountryCodes: mass.storefrontCountryCodes, succeededCount: Int64(mass.succeededCount),
                failedCount: Int64(mass.failedCount)),
            signedDate: now)
        let signedPayload = try certificateAuthority.sign(payload)
        // About no transaction: the id is empty, as for TEST.
        return OutgoingNotification(
            version: .v2, notificationType: payload.notificationType, subtype: payload.subtype, transactionId: "",
            body: try AppleJSON.camelCase(["signedPayload": signedPayload]), responseStatus: nil, deliveryError: nil,
            signedPayload: signedPayload, environment: mass.environment, sentAtMs: now, sendAttemptResult: nil)
    }
}
