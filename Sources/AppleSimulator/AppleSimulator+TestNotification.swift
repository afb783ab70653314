import Foundation

/// The payload of a TEST notification: no transaction, only the app and the environment.
/// See https://developer.apple.com/documentation/appstoreservernotifications/notificationtype
struct TestNotificationPayload: Encodable, Sendable {
    struct DataBody: Encodable, Sendable {
        var appAppleId: Int64
        var bundleId: String
        var bundleVersion: String
        var environment: String
    }

    var notificationType = "TEST"
    var notificationUUID: String
    var data: DataBody
    var version = "2.0"
    var signedDate: Int64
}

/// Request a Test Notification and Get Test Notification Status.
extension AppleSimulator {
    /// Sends a TEST notification (v2, signed) through the usual delivery, as Apple does when
    /// the app's server calls `POST /inApps/v1/notifications/test`, and returns its
    /// `testNotificationToken`.
    ///
    /// Returns once the post is done (or failed), so the notification is in
    /// `sentNotifications` and in notification history; Apple answers first and posts after.
    /// The simulator serves both environments on one URL, so the environment is a parameter
    /// (default sandbox) where Apple's comes from the host called. `bundleId`: the app asking
    /// (the token's `bid`); nil: the key's own.
    @discardableResult
    public func requestTestNotification(environment: SimulatedEnvironment = .sandbox, bundleId: String? = nil) async throws -> String {
        let now = nowMilliseconds
        let uuid = UUID().uuidString.lowercased()
        let payload = TestNotificationPayload(
            notificationUUID: uuid,
            data: .init(
                appAppleId: configuration.appAppleId, bundleId: bundleId ?? serverAPIBundleId,
                bundleVersion: configuration.bundleVersion, environment: environment.rawValue),
            signedDate: now)
        let signedPayload = try certificateAuthority.sign(payload)
        // Apple's tokens look like "<uuid>_<milliseconds>".
        let token = "\(uuid)_\(now)"
        let notification = OutgoingNotification(
            version: .v2, notificationType: "TEST", subtype: nil, transactionId: "",
            body: try AppleJSON.camelCase(["signedPayload": signedPayload]), responseStatus: nil, deliveryError: nil,
            signedPayload: signedPayload, environment: environment, sentAtMs: now, sendAttemptResult: nil)
        core.withLock { $0.testNotificationTokens[token] = signedPayload }
        await deliver([notification])
        return token
    }

    /// Get Test Notification Status: the TEST notification's payload and how its post went.
    func serverAPITestNotificationStatus(_ token: String) throws -> Data {
        guard token.count <= 128, token.contains("_") else { throw ServerAPIError.invalidTestNotificationToken }
        let sent = core.withLock { core -> OutgoingNotification? in
            guard let signedPayload = core.testNotificationTokens[token] else { return nil }
            return core.sentNotifications.last { $0.signedPayload == signedPayload }
        }
        guard let sent, let signedPayload = sent.signedPayload else { throw ServerAPIError.testNotificationNotFound }
        return try AppleJSON.camelCaseData(
            ServerAPIBody.TestNotificationStatus(signedPayload: signedPayload, sendAttempts: Self.sendAttempts(of: sent)))
    }

    /// A notification's `sendAttempts`: its one post, or none when it was not posted (no URL).
    static func sendAttempts(of notification: OutgoingNotification) -> [ServerAPIBody.SendAttempt] {
        guard let result = notification.sendAttemptResult else { return [] }
        return [ServerAPIBody.SendAttempt(attemptDate: notification.sentAtMs, sendAttemptResult: result)]
    }
}
