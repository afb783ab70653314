import AppStore
import AsyncHTTPClient
import Foundation
import Logging
import NIOHTTP1
import Primitives

/// The App Store Server API over AsyncHTTPClient: the ledger *asks* Apple (docs/architecture.md §8).
///
/// Every call goes through `AppleAPICore`: a cached ES256 token (`ServerAPIToken`: `bid`, audience
/// `appstoreconnect-v1`), 429's `Retry-After` honoured, full-jitter backoff on 5xx, time-outs and
/// refused connections, and 401 a configuration alarm: one clear log line and `onUnauthorized`,
/// never a retry. Every answer
/// comes back with its body verbatim (`ServerAPIAnswer.attempts`), and signed items stay JWS for
/// the caller to verify with `SignedDataVerifier` before they count.
public final class ServerAPIClient: Sendable {
    public let configuration: ServerAPIConfiguration
    /// The machine's time: the tokens' `iat` and `exp`, which Apple checks against its own
    /// clock, and when each attempt started.
    public let clock: WallClock
    /// The exchange, the retries and the token, shared with `AppStoreConnectClient`.
    private let core: AppleAPICore

    public init(
        configuration: ServerAPIConfiguration, clock: WallClock, httpClient: HTTPClient = .shared,
        logger: Logger = Logger(label: "AppStore.ServerAPIClient"), onUnauthorized: @escaping @Sendable () -> Void = {}
    ) async throws(ServerAPIError) {
        self.configuration = configuration
        self.clock = clock
        let token: ServerAPIToken
        do {
            token = try await ServerAPIToken(configuration: configuration)
        } catch {
            throw ServerAPIError(.invalidKey, errorMessage: "APPLE_PRIVATE_KEY is not a P-256 private key in PEM")
        }
        self.core = AppleAPICore(
            name: "the App Store Server API", access: configuration.access, clock: clock, token: token, httpClient: httpClient,
            logger: logger, bodyLimit: 16 << 20, alarms: [401],
            alarmMessage: { _ in
                "the App Store Server API refused our credentials (401): check APPLE_ISSUER_ID, APPLE_KEY_ID, APPLE_PRIVATE_KEY and the clock"
            },
            onAlarm: onUnauthorized)
    }

    // MARK: - Endpoints

    /// Get Transaction Info.
    public func transactionInfo(_ transactionId: String, environment: AppStoreEnvironment) async throws(ServerAPIError) -> ServerAPIAnswer<TransactionInfoResponse> {
        try await call(.GET, "/inApps/v1/transactions/\(Self.segment(transactionId))", environment: environment)
    }

    /// Get Transaction History (v2), one page; pass the previous page's `revision` for the next.
    public func transactionHistory(
        _ transactionId: String, environment: AppStoreEnvironment, revision: String? = nil, filters: TransactionHistoryFilters = .init()
    ) async throws(ServerAPIError) -> ServerAPIAnswer<SignedTransactionPage> {
        try await call(.GET, "/inApps/v2/history/\(Self.segment(transactionId))", query: filters.query(revision: revision), environment: environment)
    }

    /// Get All Subscription Statuses of the Apple account that made `transactionId`.
    public func subscriptionStatuses(_ transactionId: String, environment: AppStoreEnvironment) async throws(ServerAPIError) -> ServerAPIAnswer<SubscriptionStatusesResponse> {
        try await call(.GET, "/inApps/v1/subscriptions/\(Self.segment(transactionId))", environment: environment)
    }

    /// Get Refund History (v2), one page.
    public func refundHistory(_ transactionId: String, environment: AppStoreEnvironment, revision: String? = nil) async throws(ServerAPIError) -> ServerAPIAnswer<SignedTransactionPage> {
        try await call(
            .GET, "/inApps/v2/refund/lookup/\(Self.segment(transactionId))", query: revision.map { [("revision", $0)] } ?? [], environment: environment)
    }

    /// Look Up Order ID (the id on the customer's receipt e-mail).
    public func lookUpOrder(_ orderId: String, environment: AppStoreEnvironment) async throws(ServerAPIError) -> ServerAPIAnswer<OrderLookupResponse> {
        try await call(.GET, "/inApps/v1/lookup/\(Self.segment(orderId))", environment: environment)
    }

    /// Get Notification History, one page; pass the previous page's `paginationToken` for the next.
    public func notificationHistory(
        _ request: NotificationHistoryRequest, environment: AppStoreEnvironment, paginationToken: String? = nil
    ) async throws(ServerAPIError) -> ServerAPIAnswer<NotificationHistoryResponse> {
        let body: Data
        do { body = try JSONEncoder().encode(request) } catch { throw ServerAPIError(.malformedAnswer, errorMessage: "the request did not encode") }
        return try await call(
            .POST, "/inApps/v1/notifications/history", query: paginationToken.map { [("paginationToken", $0)] } ?? [], body: body,
            environment: environment)
    }

    /// Send Consumption Information (v2). Apple answers 202 with no body.
    public func sendConsumption(
        _ request: ConsumptionRequest, transactionId: String, environment: AppStoreEnvironment
    ) async throws(ServerAPIError) -> ServerAPIAnswer<Empty> {
        let body: Data
        do { body = try JSONEncoder().encode(request) } catch { throw ServerAPIError(.malformedAnswer, errorMessage: "the request did not encode") }
        return try await call(.PUT, "/inApps/v2/transactions/consumption/\(Self.segment(transactionId))", body: body, environment: environment)
    }

    /// Request a Test Notification.
    public func requestTestNotification(environment: AppStoreEnvironment) async throws(ServerAPIError) -> ServerAPIAnswer<TestNotificationResponse> {
        try await call(.POST, "/inApps/v1/notifications/test", environment: environment)
    }

    /// A body Apple sends none of (202).
    public struct Empty: Decodable, Sendable, Hashable {}

    // MARK: - The exchange

    func call<Answer: Decodable & Sendable>(
        _ method: HTTPMethod, _ path: String, query: [(String, String)] = [], body: Data? = nil, environment: AppStoreEnvironment
    ) async throws(ServerAPIError) -> ServerAPIAnswer<Answer> {
        var url = configuration.baseURL(for: environment) + path
        if !query.isEmpty {
            url += "?" + query.map { "\($0.0)=\(Self.queryValue($0.1))" }.joined(separator: "&")
        }
        let attempts: [ServerAPIAttempt]
        do { attempts = try await core.exchange(method, url: url, body: body) } catch { throw ServerAPIError(error) }
        if Answer.self == Empty.self, let empty = Empty() as? Answer {
            return ServerAPIAnswer(value: empty, attempts: attempts)
        }
        guard let value = try? JSONDecoder().decode(Answer.self, from: Data(attempts.last?.body ?? [])) else {
            throw ServerAPIError(
                .malformedAnswer, httpStatus: attempts.last?.httpStatus, errorMessage: "Apple's answer is not the documented \(Answer.self)",
                attempts: attempts)
        }
        return ServerAPIAnswer(value: value, attempts: attempts)
    }

    /// An id as one path segment: RFC 3986's unreserved characters as they are (a product id's
    /// dots, a request id's dashes: a server need not decode them to match), the rest escaped.
    static func segment(_ id: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return id.addingPercentEncoding(withAllowedCharacters: allowed) ?? id
    }

    static func queryValue(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }
}

/// A decoded answer and every attempt it took, bodies verbatim.
public struct ServerAPIAnswer<Value: Sendable>: Sendable {
    public var value: Value
    public var attempts: [ServerAPIAttempt]

    /// The body of the attempt that succeeded.
    public var body: [UInt8] { attempts.last?.body ?? [] }
}

/// Get Transaction History's filters. Dates are milliseconds since 1970, UTC.
public struct TransactionHistoryFilters: Sendable, Hashable {
    public var startDate: Int64?
    public var endDate: Int64?
    public var productIds: [String]
    /// `AUTO_RENEWABLE`, `NON_RENEWABLE`, `CONSUMABLE`, `NON_CONSUMABLE`.
    public var productTypes: [String]
    /// `ASCENDING` or `DESCENDING`.
    public var sort: String?
    public var revoked: Bool?

    public init(startDate: Int64? = nil, endDate: Int64? = nil, productIds: [String] = [], productTypes: [String] = [], sort: String? = "ASCENDING", revoked: Bool? = nil) {
        self.startDate = startDate
        self.endDate = endDate
        self.productIds = productIds
        self.productTypes = productTypes
        self.sort = sort
        self.revoked = revoked
    }

    /// Apple wants the filters repeated with every `revision`.
    func query(revision: String?) -> [(String, String)] {
        var items: [(String, String)] = []
        if let revision { items.append(("revision", revision)) }
        if let startDate { items.append(("startDate", String(startDate))) }
        if let endDate { items.append(("endDate", String(endDate))) }
        items += productIds.map { ("productId", $0) }
        items += productTypes.map { ("productType", $0) }
        if let sort { items.append(("sort", sort)) }
        if let revoked { items.append(("revoked", String(revoked))) }
        return items
    }
}
