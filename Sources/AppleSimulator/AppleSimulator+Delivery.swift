import AsyncHTTPClient
import Foundation
import NIOCore

/// Posting notifications to the app's server, as Apple does: one POST per notification,
/// JSON body, in the order the events happened.
extension AppleSimulator {
    /// Posts each notification to `notificationURL` (if any) and records it with
    /// the receiver's answer in `sentNotifications`. A failed post is logged and recorded, never
    /// thrown: Apple does not tell the device when the app's server is down.
    func deliver(_ notifications: [OutgoingNotification]) async {
        for var notification in notifications {
            if let url = notificationURL {
                do {
                    var request = HTTPClientRequest(url: url)
                    request.method = .POST
                    request.headers.add(name: "Content-Type", value: "application/json")
                    request.body = .bytes(ByteBuffer(string: notification.body))
                    let timeout = TimeAmount.nanoseconds(
                        configuration.notificationTimeout.components.seconds * 1_000_000_000
                            + configuration.notificationTimeout.components.attoseconds / 1_000_000_000)
                    let response = try await HTTPClient.shared.execute(request, timeout: timeout)
                    // Drain the body so the connection can be reused.
                    _ = try await response.body.collect(upTo: 1 << 20)
                    notification.responseStatus = Int(response.status.code)
                    notification.sendAttemptResult =
                        (200..<300).contains(Int(response.status.code)) ? "SUCCESS" : "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
                    if !(200..<300).contains(notification.responseStatus ?? 0) {
                        logger.warning(
                            "notification refused",
                            metadata: ["type": "\(notification.notificationType)", "status": "\(response.status.code)"])
                    }
                } catch {
                    notification.deliveryError = String(describing: error)
                    notification.sendAttemptResult = Self.sendAttemptResult(for: error)
                    logger.warning(
                        "notification not delivered",
                        metadata: ["type": "\(notification.notificationType)", "error": "\(error)"])
                }
            }
            let delivered = notification
            core.withLock { $0.sentNotifications.append(delivered) }
        }
    }

    /// Apple's `sendAttemptResult` for a post that threw: a time-out, a connection closed
    /// before the answer, or no answer at all (refused, unreachable).
    static func sendAttemptResult(for error: any Error) -> String {
        if let error = error as? HTTPClientError {
            let timeouts: [HTTPClientError] = [.deadlineExceeded, .readTimeout, .writeTimeout, .connectTimeout]
            if timeouts.contains(error) { return "TIMED_OUT" }
            if error == .remoteConnectionClosed { return "PREMATURE_CLOSE" }
        }
        return "NO_RESPONSE"
    }
}
