import Foundation
import Hummingbird
import Logging

/// The App Store Server API over HTTP: Apple's paths, on the simulator's one port for both
/// environments (point `APPLE_SERVER_API_URL` at the server's base URL).
///
/// Every call is counted, then answers an injected failure if a rule covers it, then has its
/// `Authorization: Bearer` JWT checked (401, empty body, when refused), then is answered from
/// the state; errors are Apple's `{"errorCode","errorMessage"}`.
struct ServerAPIRoutes {
    let simulator: AppleSimulator
    let logger: Logger

    func register(on router: Router<BasicRequestContext>) {
        router.get("inApps/v1/transactions/:transactionId") { request, context in
            await answer(.transactionInfo, request) { bundleId in
                .json(try simulator.serverAPITransactionInfo(try context.parameters.require("transactionId"), bundleId: bundleId))
            }
        }
        router.get("inApps/v2/history/:transactionId") { request, context in
            await answer(.transactionHistory, request) { bundleId in
                .json(
                    try simulator.serverAPITransactionHistory(
                        try context.parameters.require("transactionId"), parameters: Self.parameters(of: request), bundleId: bundleId))
            }
        }
        router.get("inApps/v1/subscriptions/:transactionId") { request, context in
            await answer(.subscriptionStatuses, request) { bundleId in
                .json(
                    try simulator.serverAPISubscriptionStatuses(
                        try context.parameters.require("transactionId"), parameters: Self.parameters(of: request), bundleId: bundleId))
            }
        }
        router.get("inApps/v2/refund/lookup/:transactionId") { request, context in
            await answer(.refundHistory, request) { bundleId in
                .json(
                    try simulator.serverAPIRefundHistory(
                        try context.parameters.require("transactionId"), parameters: Self.parameters(of: request), bundleId: bundleId))
            }
        }
        router.get("inApps/v1/lookup/:orderId") { request, context in
            await answer(.orderLookup, request) { bundleId in
                .json(try simulator.serverAPIOrderLookup(try context.parameters.require("orderId"), bundleId: bundleId))
            }
        }
        router.post("inApps/v1/notifications/history") { request, _ in
            await answer(.notificationHistory, request) { bundleId in
                let token = request.uri.queryParameters["paginationToken"].map(String.init)
                let body = try await HTTPReplies.body(of: request)
                return .json(try simulator.serverAPINotificationHistory(body: body, paginationToken: token, bundleId: bundleId))
            }
        }
        router.put("inApps/v2/transactions/consumption/:transactionId") { request, context in
            await answer(.consumption, request) { bundleId in
                let body = try await HTTPReplies.body(of: request)
                try simulator.serverAPISendConsumption(try context.parameters.require("transactionId"), body: body, bundleId: bundleId)
                return .accepted
            }
        }
        router.post("inApps/v1/notifications/test") { request, _ in
            await answer(.testNotification, request) { bundleId in
                // Not Apple's: the simulator serves both environments on one URL, so the
                // environment of the TEST notification may be named (default sandbox).
                let named = request.uri.queryParameters["environment"].map(String.init)
                let environment = try named.map { try ControlAPI.environment($0) } ?? .sandbox
                let token = try await simulator.requestTestNotification(environment: environment, bundleId: bundleId)
                return .json(try AppleJSON.camelCaseData(ServerAPIBody.TestNotification(testNotificationToken: token)))
            }
        }
        router.get("inApps/v1/notifications/test/:token") { request, context in
            await answer(.testNotificationStatus, request) { _ in
                .json(try simulator.serverAPITestNotificationStatus(try context.parameters.require("token")))
            }
        }
        registerExtensions(on: router)
        registerTransactionUpdates(on: router)
    }

    /// What a handler answers when all goes well.
    enum Success {
        /// 200 with this JSON.
        case json(Data)
        /// 202, empty body (Send Consumption Information).
        case accepted
        /// 200, empty body (Set App Account Token, Finish Transaction).
        case empty
    }

    /// Counts the call, applies an injected failure, checks the JWT, then runs `handler` for the
    /// app the JWT names (`bid`): Apple answers per app.
    func answer(
        _ endpoint: ServerAPIEndpoint, _ request: Request, _ handler: (String) async throws -> Success
    ) async -> Response {
        if let rule = simulator.beginServerAPICall(endpoint) {
            if rule.delayMilliseconds > 0 {
                // Bounded so a forgotten rule cannot hold a connection forever.
                try? await Task.sleep(for: .milliseconds(min(rule.delayMilliseconds, 120_000)))
            }
            switch rule.answer {
            case .rateLimited(let seconds):
                return Self.error(.rateLimitExceeded, retryAfterSeconds: max(seconds, 0))
            case .unauthorized:
                return Response(status: .unauthorized)
            case .serverError(let status):
                var failure = ServerAPIError.generalInternal
                failure.status = (500...599).contains(status) ? status : 500
                return Self.error(failure)
            case .normal:
                break
            }
        }
        guard let verifier = simulator.serverAPIVerifier else {
            logger.debug("Server API call refused: no serverAPI configuration", metadata: ["endpoint": "\(endpoint.rawValue)"])
            return Response(status: .unauthorized)
        }
        let bundleId: String
        do {
            bundleId = try await verifier.verify(authorization: request.headers[.authorization], now: simulator.machineNow)
        } catch {
            logger.debug("Server API token refused", metadata: ["endpoint": "\(endpoint.rawValue)", "reason": "\(error)"])
            return Response(status: .unauthorized)
        }
        do {
            switch try await handler(bundleId) {
            case .json(let data): return HTTPReplies.json(data)
            case .accepted: return Response(status: .accepted)
            case .empty: return Response(status: .ok)
            }
        } catch let error as ServerAPIError {
            return Self.error(error)
        } catch let error as SimulatorError {
            // From the simulator's own checks (an unknown `environment`): a bad request.
            logger.debug("Server API request refused", metadata: ["error": "\(error)"])
            return Self.error(.generalBadRequest)
        } catch {
            logger.error("Server API answer failed", metadata: ["endpoint": "\(endpoint.rawValue)", "error": "\(error)"])
            return Self.error(.generalInternal)
        }
    }

    /// Apple's error body with the error's status (and `Retry-After` for a 429).
    static func error(_ error: ServerAPIError, retryAfterSeconds: Int? = nil) -> Response {
        let body = ServerAPIBody.ErrorBody(errorCode: error.code, errorMessage: error.message)
        let data = (try? AppleJSON.camelCaseData(body)) ?? Data()
        var response = HTTPReplies.json(data, status: HTTPResponse.Status(code: error.status))
        if let retryAfterSeconds {
            response.headers[.retryAfter] = String(retryAfterSeconds)
        }
        return response
    }

    /// The query string as name → values (names may repeat: `productId=a&productId=b`).
    static func parameters(of request: Request) -> [String: [String]] {
        var parameters: [String: [String]] = [:]
        for (name, value) in request.uri.queryParameters {
            parameters[String(name), default: []].append(String(value))
        }
        return parameters
    }
}
