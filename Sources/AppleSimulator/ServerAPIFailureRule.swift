/// One endpoint of the simulator's App Store Server API, for counting calls and aiming failures.
/// Raw values are the names the control API uses.
public enum ServerAPIEndpoint: String, Sendable, Hashable, Codable, CaseIterable {
    /// `GET /inApps/v1/transactions/{transactionId}`
    case transactionInfo = "transaction_info"
    /// `GET /inApps/v2/history/{transactionId}`
    case transactionHistory = "transaction_history"
    /// `GET /inApps/v1/subscriptions/{transactionId}`
    case subscriptionStatuses = "subscription_statuses"
    /// `GET /inApps/v2/refund/lookup/{transactionId}`
    case refundHistory = "refund_history"
    /// `GET /inApps/v1/lookup/{orderId}`
    case orderLookup = "order_lookup"
    /// `POST /inApps/v1/notifications/history`
    case notificationHistory = "notification_history"
    /// `PUT /inApps/v2/transactions/consumption/{transactionId}`
    case consumption
    /// `POST /inApps/v1/notifications/test`
    case testNotification = "test_notification"
    /// `GET /inApps/v1/notifications/test/{testNotificationToken}`
    case testNotificationStatus = "test_notification_status"
    /// `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`
    case extendRenewalDate = "extend_renewal_date"
    /// `POST /inApps/v1/subscriptions/extend/mass`
    case massExtendRenewalDate = "mass_extend_renewal_date"
    /// `GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`
    case massExtendRenewalDateStatus = "mass_extend_renewal_date_status"
    /// `PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken`
    case setAppAccountToken = "set_app_account_token"
    /// `POST /inApps/v1/transactions/{transactionId}/finish`
    case finishTransaction = "finish_transaction"
}

/// Makes the next N App Store Server API calls answer something else than normally.
///
/// Rules apply in the order added, before the JWT is checked (Apple's rate limiter and its
/// outages do not read tokens); each matching call spends one use.
public struct ServerAPIFailureRule: Sendable, Hashable, Codable {
    /// What a call covered by the rule answers.
    public enum Answer: Sendable, Hashable, Codable {
        /// HTTP 429 with `Retry-After: seconds` and `{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}`.
        case rateLimited(retryAfterSeconds: Int)
        /// HTTP 401 with an empty body, as Apple answers a token it refuses.
        case unauthorized
        /// This 5xx status with `{"errorCode":5000000,"errorMessage":"An unknown error occurred."}`.
        case serverError(status: Int)
        /// The normal answer: with `delayMilliseconds`, a slow Apple.
        case normal
    }

    public var answer: Answer
    /// Calls the rule still covers; it is dropped when this reaches 0.
    public var remaining: Int
    /// How long to wait before answering, in milliseconds (at most 120 000), so a client's
    /// time-out can fire.
    public var delayMilliseconds: Int
    /// Only calls to this endpoint; nil: every Server API endpoint.
    public var endpoint: ServerAPIEndpoint?

    public init(_ answer: Answer, next count: Int, delayMilliseconds: Int = 0, endpoint: ServerAPIEndpoint? = nil) {
        self.answer = answer
        self.remaining = count
        self.delayMilliseconds = delayMilliseconds
        self.endpoint = endpoint
    }
}

/// The active Server API failure rules (kept apart from verifyReceipt's `FailurePlan`, whose
/// answers are verifyReceipt statuses).
struct ServerAPIFailurePlan: Sendable {
    private(set) var rules: [ServerAPIFailureRule] = []

    mutating func add(_ rule: ServerAPIFailureRule) {
        guard rule.remaining > 0 else { return }
        rules.append(rule)
    }

    mutating func clear() {
        rules.removeAll()
    }

    /// The rule covering this call, if any; spends one of its uses.
    mutating func take(for endpoint: ServerAPIEndpoint) -> ServerAPIFailureRule? {
        guard let index = rules.firstIndex(where: { $0.endpoint == nil || $0.endpoint == endpoint }) else {
            return nil
        }
        let rule = rules[index]
        if rule.remaining <= 1 {
            rules.remove(at: index)
        } else {
            rules[index].remaining -= 1
        }
        return rule
    }
}
