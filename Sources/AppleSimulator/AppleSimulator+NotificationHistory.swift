import Foundation

/// Get Notification History: every v2 notification the simulator produced, whether its post
/// succeeded, failed, or was never made (no URL), so a client can recover what never reached it.
/// See https://developer.apple.com/documentation/appstoreserverapi/get-notification-history
extension AppleSimulator {
    /// Apple's page size for notification history.
    static let notificationHistoryPageSize = 20

    /// The page of notification history `body` asks for, after `paginationToken`.
    ///
    /// Notifications are listed in send order with `startDate <= sentAtMs <= endDate`
    /// (simulated milliseconds), filtered by `notificationType`, `notificationSubtype`,
    /// `onlyFailures` (every one whose post was not a success, unposted ones included) and
    /// `transactionId` (the notifications about any transaction of that transaction's Apple
    /// account, so of its environment; an unknown id lists none). Without a `transactionId`
    /// both environments are listed, since the simulator serves both on one URL. The simulator
    /// keeps every notification: no 180-day (30 in sandbox) horizon.
    func serverAPINotificationHistory(body: Data, paginationToken: String?, bundleId: String) throws -> Data {
        let request: ServerAPIBody.NotificationHistoryRequest
        do {
            request = try JSONDecoder().decode(ServerAPIBody.NotificationHistoryRequest.self, from: body)
        } catch {
            throw ServerAPIError.generalBadRequest
        }
        guard let startMs = request.startDate.flatMap(AppleSimulator.milliseconds) else { throw ServerAPIError.invalidStartDate }
        guard let endMs = request.endDate.flatMap(AppleSimulator.milliseconds) else { throw ServerAPIError.invalidEndDate }
        guard startMs < endMs else { throw ServerAPIError.startDateAfterEndDate }
        var from = 0
        if let paginationToken {
            guard let position = PageToken.decode(paginationToken), position <= Int64(Int32.max) else {
                throw ServerAPIError.invalidPaginationToken
            }
            from = Int(position)
        }
        let filter = NotificationHistoryFilter(
            startMs: startMs, endMs: endMs, request: request, bundleId: bundleId)
        let (page, next) = core.withLock { core -> ([OutgoingNotification], Int?) in
            let transactions = core.state.transactions
            let appleId = request.transactionId.map { transactions[$0]?.appleId }
            var page: [OutgoingNotification] = []
            var index = from
            while index < core.sentNotifications.count {
                let notification = core.sentNotifications[index]
                if filter.admits(notification, transactions: transactions, appleId: appleId) {
                    // A 21st match: more follow, and the next page starts here.
                    if page.count == Self.notificationHistoryPageSize { return (page, index) }
                    page.append(notification)
                }
                index += 1
            }
            return (page, nil)
        }
        let items = page.compactMap { notification -> ServerAPIBody.NotificationHistory.Item? in
            notification.signedPayload.map {
                ServerAPIBody.NotificationHistory.Item(signedPayload: $0, sendAttempts: Self.sendAttempts(of: notification))
            }
        }
        return try AppleJSON.camelCaseData(
            ServerAPIBody.NotificationHistory(
                notificationHistory: items, hasMore: next != nil, paginationToken: next.map { PageToken.encode(Int64($0)) }))
    }

    /// A JSON date as whole milliseconds; nil when it is no date (not finite, or past year 200 000).
    static func milliseconds(_ value: Double) -> Int64? {
        guard value.isFinite, abs(value) < 6e15 else { return nil }
        return Int64(value.rounded(.down))
    }
}

/// The filters of one Get Notification History request.
struct NotificationHistoryFilter: Sendable {
    var startMs: Int64
    var endMs: Int64
    var request: ServerAPIBody.NotificationHistoryRequest
    /// Notifications about transactions of other apps are not this app's.
    var bundleId: String

    /// - Parameter appleId: nil without a `transactionId` filter; `.some(nil)` when its
    ///   transaction is unknown (nothing matches).
    func admits(
        _ notification: OutgoingNotification, transactions: [String: SimulatedTransaction], appleId: String??
    ) -> Bool {
        guard notification.version == .v2, notification.signedPayload != nil else { return false }
        guard startMs <= notification.sentAtMs, notification.sentAtMs <= endMs else { return false }
        if let type = request.notificationType, notification.notificationType != type { return false }
        if let subtype = request.notificationSubtype, notification.subtype != subtype { return false }
        if request.onlyFailures == true, notification.sendAttemptResult == "SUCCESS" { return false }
        let transaction = transactions[notification.transactionId]
        if let transaction, transaction.bundleId != bundleId { return false }
        if let appleId {
            guard let appleId, let transaction, transaction.appleId == appleId else { return false }
        }
        return true
    }
}
