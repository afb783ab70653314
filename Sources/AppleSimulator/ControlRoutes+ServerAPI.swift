import Foundation
import Hummingbird

/// The control API's App Store Server API knobs, under `/control/server-api`:
/// - `GET|POST|DELETE failures`: the next N calls answer 429 (with `Retry-After`), 401 or a 5xx,
///   or answer late;
/// - `GET stats`: calls per endpoint;
/// - `GET consumption-requests`: every Send Consumption Information call accepted;
/// - `GET finish-requests`: every Finish Transaction call accepted, and `GET finish-counts`:
///   calls per transaction id;
/// - `GET renewal-extensions`: `{"granted":[...],"mass":[...]}`, every renewal-date extension
///   granted and every mass extension request with its progress;
/// - `POST mass-extensions/complete`: runs the pending mass extensions now (their notifications
///   are posted) and answers every mass extension request.
extension ControlRoutes {
    func registerServerAPI(on control: RouterGroup<BasicRequestContext>) {
        control.get("server-api/failures") { _, _ in try HTTPReplies.json(simulator.serverAPIFailureRules) }
        control.post("server-api/failures") { request, _ in
            try await handle {
                let body = try await HTTPReplies.decode(ControlAPI.ServerAPIFailureRequest.self, from: request)
                simulator.injectServerAPIFailure(try body.rule())
                return try HTTPReplies.json(simulator.serverAPIFailureRules, status: .created)
            }
        }
        control.delete("server-api/failures") { _, _ in
            simulator.clearServerAPIFailures()
            return HTTPReplies.empty(.noContent)
        }
        control.get("server-api/stats") { _, _ in
            let calls = simulator.serverAPICalls
            var counts: [String: Int] = [:]
            for endpoint in ServerAPIEndpoint.allCases { counts[endpoint.rawValue] = calls[endpoint] ?? 0 }
            return try HTTPReplies.json(counts)
        }
        control.get("server-api/consumption-requests") { _, _ in try HTTPReplies.json(simulator.consumptionRequests) }
        control.get("server-api/finish-requests") { _, _ in try HTTPReplies.json(simulator.finishRequests) }
        control.get("server-api/finish-counts") { _, _ in try HTTPReplies.json(simulator.finishRequestCounts) }
        control.get("server-api/renewal-extensions") { _, _ in
            try HTTPReplies.json(
                ControlAPI.RenewalExtensions(granted: simulator.renewalExtensions, mass: simulator.massRenewalExtensions))
        }
        control.post("server-api/mass-extensions/complete") { _, _ in
            try HTTPReplies.json(await simulator.completeMassExtensions())
        }
    }
}

extension ControlAPI {
    /// `GET /control/server-api/renewal-extensions`.
    struct RenewalExtensions: Encodable {
        var granted: [RenewalExtension]
        var mass: [MassRenewalExtension]
    }

    /// One Server API failure rule, flattened: `http_status` 429 (with `retry_after` seconds,
    /// default 1), 401 or 500...599; or only `delay_ms` for a slow normal answer. `next`
    /// (default 1) calls, to `endpoint` (a `ServerAPIEndpoint` raw value, e.g.
    /// "transaction_history") or to any.
    struct ServerAPIFailureRequest: Decodable {
        var httpStatus: Int?
        var retryAfter: Int?
        var delayMs: Int?
        var next: Int?
        var endpoint: String?

        func rule() throws -> ServerAPIFailureRule {
            let answer: ServerAPIFailureRule.Answer
            switch httpStatus {
            case 429?: answer = .rateLimited(retryAfterSeconds: max(retryAfter ?? 1, 0))
            case 401?: answer = .unauthorized
            case let status? where (500...599).contains(status): answer = .serverError(status: status)
            case nil where delayMs != nil: answer = .normal
            default:
                throw SimulatorError(
                    .invalidRequest, "give http_status 429, 401 or 5xx, or only delay_ms for a slow answer")
            }
            let count = next ?? 1
            guard count >= 1 else { throw SimulatorError(.invalidRequest, "next is at least 1") }
            let only = try endpoint.map { name -> ServerAPIEndpoint in
                guard let endpoint = ServerAPIEndpoint(rawValue: name) else {
                    throw SimulatorError(.invalidRequest, "no Server API endpoint \(name)")
                }
                return endpoint
            }
            return ServerAPIFailureRule(
                answer, next: count, delayMilliseconds: max(delayMs ?? 0, 0), endpoint: only)
        }
    }
}
