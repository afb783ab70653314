import AppStore
import AsyncHTTPClient
import Foundation
import Logging
import NIOHTTP1
import Primitives

/// The App Store Server API over AsyncHTTPClient: the ledger *asks* Apple (docs/architecture.md §8).
///
/// Every call signs with a cached ES256 token (`ServerAPIToken`), honours 429's `Retry-After`,
/// backs off with full jitter on 5xx, time-outs and refused connections, and treats 401 as a
/// configuration alarm: one clear log line and `onUnauthorized`, never a retry. Every answer
/// comes back with its body verbatim (`ServerAPIAnswer.attempts`), and signed items stay JWS for
/// the caller to verify with `SignedDataVerifier` before they count.
public final class ServerAPIClient: Sendable {
    public let configuration: ServerAPIConfiguration
    /// The machine's time: the tokens' `iat` and `exp`, which Apple checks against its own
    /// clock, and when each attempt started.
    public let clock: WallClock
    private let token: ServerAPIToken
    private let httpClient: HTTPClient
    private let logger: Logger
    private let onUnauthorized: @Sendable () -> Void

    public init(
        configuration: ServerAPIConfiguration, clock: WallClock, httpClient: HTTPClient = .shared,
        logger: Logger = Logger(label: "AppStore.ServerAPIClient"), onUnauthorized: @escaping @Sendable () -> Void = {}
    ) async throws(ServerAPIError) {
        self.configuration = configuration
        self.clock = clock
        do {
            self.token = try await ServerAPIToken(configuration: configuration)
        } catch {
            throw ServerAPIError(.invalidKey, errorMessage: "APPLE_PRIVATE_KEY is not a P-256 private key in PEM")
        }
        self.httpClient = httpClient
        self.logger = logger
        self.onUnauthorized = onUnauthorized
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
        var attempts: [ServerAPIAttempt] = []
        var attempt = 0
        while true {
            attempt += 1
            let bearer: String
            do { bearer = try await token.current(nowMs: clock()) } catch {
                throw ServerAPIError(.invalidKey, errorMessage: "the token could not be signed", attempts: attempts)
            }
            let (exchange, retryAfter) = await send(method, url: url, body: body, bearer: bearer)
            attempts.append(exchange)
            let status = exchange.httpStatus
            let apple = status.flatMap { _ in try? JSONDecoder().decode(ServerAPIErrorBody.self, from: Data(exchange.body)) }
            switch status {
            case let code? where (200..<300).contains(code):
                if Answer.self == Empty.self, let empty = Empty() as? Answer {
                    return ServerAPIAnswer(value: empty, attempts: attempts)
                }
                guard let value = try? JSONDecoder().decode(Answer.self, from: Data(exchange.body)) else {
                    throw ServerAPIError(.malformedAnswer, httpStatus: code, errorMessage: "Apple's answer is not the documented \(Answer.self)", attempts: attempts)
                }
                return ServerAPIAnswer(value: value, attempts: attempts)
            case 401?:
                token.discard()
                // The alarm: a wrong key, key id, issuer or clock does not heal by asking again.
                logger.critical("the App Store Server API refused our credentials (401): check APPLE_ISSUER_ID, APPLE_KEY_ID, APPLE_PRIVATE_KEY and the clock", metadata: [
                    "url": "\(url)", "key_id": "\(configuration.keyId)",
                ])
                onUnauthorized()
                throw ServerAPIError(.unauthorized, httpStatus: 401, attempts: attempts)
            case 429?:
                let wait = retryAfter ?? 1
                guard attempt < configuration.maximumAttempts, Duration.seconds(wait) <= configuration.longestRetryAfter else {
                    throw ServerAPIError(.rateLimited, httpStatus: 429, errorCode: apple?.errorCode, errorMessage: apple?.errorMessage, retryAfterSeconds: wait, attempts: attempts)
                }
                logger.notice("rate limited by the App Store Server API; waiting as asked", metadata: ["retry_after_s": "\(wait)"])
                try? await Task.sleep(for: .seconds(wait))
            case let code? where code >= 500:
                guard attempt < configuration.maximumAttempts else {
                    throw ServerAPIError(.unavailable, httpStatus: code, errorCode: apple?.errorCode, errorMessage: apple?.errorMessage, attempts: attempts)
                }
                try? await Task.sleep(for: backoff(afterAttempt: attempt))
            case let code?:
                throw ServerAPIError(.refused, httpStatus: code, errorCode: apple?.errorCode, errorMessage: apple?.errorMessage, attempts: attempts)
            case nil:
                guard attempt < configuration.maximumAttempts else {
                    throw ServerAPIError(.unavailable, errorMessage: exchange.failure, attempts: attempts)
                }
                try? await Task.sleep(for: backoff(afterAttempt: attempt))
            }
            if Task.isCancelled { throw ServerAPIError(.unavailable, errorMessage: "cancelled", attempts: attempts) }
        }
    }

    func backoff(afterAttempt attempt: Int) -> Duration {
        AppleHTTPExchange.backoff(afterAttempt: attempt, base: configuration.baseDelay, maximum: configuration.maximumDelay)
    }

    private func send(_ method: HTTPMethod, url: String, body: Data?, bearer: String) async -> (ServerAPIAttempt, retryAfter: Int?) {
        await AppleHTTPExchange(httpClient: httpClient, clock: clock, timeout: configuration.timeout, bodyLimit: 16 << 20)
            .send(method, url: url, body: body, bearer: bearer)
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
