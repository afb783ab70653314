import Foundation
import HTTPTypes
import Hummingbird
import LedgerStore
import Logging

/// The outermost middleware: gives every request its id (echoed in `X-Request-ID` and put in
/// every log line of the request), turns every error into the API's JSON error shape (never a
/// bare 5xx without a body), and counts requests and their latency per route and status.
struct RequestMiddleware: RouterMiddleware {
    typealias Context = LedgerRequestContext
    let metrics: LedgerMetrics
    let allowed: AllowedMethods
    /// The log's head: the position of a recording answer that appended nothing.
    let headPosition: @Sendable () async throws -> Int64
    /// Opens the handles of people in every answer (`HandleOpening`); nil: answers as built.
    var people: People? = nil

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.requestID = Self.requestID(from: request.headers[.xRequestID])
        context.logger[metadataKey: "request_id"] = .string(context.requestID)
        let start = ContinuousClock.now
        var response: Response
        var recorded: Int64?
        // The handles this request seals, which its answer is opened with (`HandleOpening`).
        let sealedNames = People.SealedNames()
        do {
            (response, recorded) = try await RecordedPosition.recording {
                try await RequestLogContext.$requestID.withValue(context.requestID) {
                    try await People.$sealedInThisRequest.withValue(sealedNames) {
                        try await next(request, context)
                    }
                }
            }
            if Self.records(request), (200..<300).contains(response.status.code) {
                response.headers[.xLedgerPosition] = try await positionHeader(recorded, context: context)
            }
        } catch {
            if let http = error as? HTTPError, http.status == .notFound, let allow = allowed.allow(for: request.uri.path) {
                // A known path with a method it does not take (RFC 9110 §15.5.6).
                var answer = APIError(.methodNotAllowed, "method_not_allowed", "\(request.uri.path) takes \(allow)")
                answer.headers[.allow] = allow
                response = try answer.response(from: request, context: context)
            } else if let answer = APIError.from(error) {
                response = try answer.response(from: request, context: context)
            } else {
                // Never the error's text: it may come from a layer that quotes input.
                context.logger.error("request failed unexpectedly", metadata: ["error_type": "\(type(of: error))"])
                response = try APIError(.internalServerError, "internal_error", "the ledger failed to handle this request")
                    .response(from: request, context: context)
            }
        }
        if let people {
            do {
                response = try await People.$sealedInThisRequest.withValue(sealedNames) {
                    try await HandleOpening.open(response, people: people)
                }
            } catch {
                context.logger.error("an answer's people could not be opened", metadata: ["error_type": "\(type(of: error))"])
                // What the request recorded stays recorded: retried with its Idempotency-Key, it
                // answers the same without recording twice.
                response = try APIError(
                    .serviceUnavailable, "database_unavailable",
                    "the ledger cannot read the people's keys to show this answer; try again (with the same Idempotency-Key if it recorded something)")
                    .response(from: request, context: context)
            }
        }
        response.headers[.xRequestID] = context.requestID
        let route = context.endpointPath ?? "unmatched"
        metrics.recordRequest(route: route, method: request.method.rawValue, status: Int(response.status.code), duration: ContinuousClock.now - start)
        context.logger.info("request", metadata: [
            "method": "\(request.method.rawValue)", "route": "\(route)", "status": "\(response.status.code)",
        ])
        return response
    }

    /// True for the API's calls that may record something: every 2xx of theirs carries
    /// `X-Ledger-Position` (docs/http-api.md, "Reads that say what they need").
    static func records(_ request: Request) -> Bool {
        ![.get, .head, .options].contains(request.method) && request.uri.path.hasPrefix("/v1/")
    }

    /// The position the answer rests on: the last event the request appended, else (a duplicate,
    /// an idempotent replay, answered from events already recorded) the head, which holds them.
    /// A head that cannot be read leaves the header out rather than fail a recorded request.
    private func positionHeader(_ recorded: Int64?, context: Context) async throws -> String? {
        if let recorded { return String(recorded) }
        do {
            return String(try await headPosition())
        } catch {
            context.logger.warning("the log's head cannot be read for X-Ledger-Position", metadata: ["error_type": "\(type(of: error))"])
            return nil
        }
    }

    /// The caller's id when it is a short token of safe characters (it goes into logs), else a new one.
    static func requestID(from header: String?) -> String {
        if let header, (1...128).contains(header.count),
           header.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) || "-_.:".unicodeScalars.contains($0) }),
           header.allSatisfy(\.isASCII) {
            return header
        }
        return UUID().uuidString.lowercased()
    }
}

extension HTTPField.Name {
    static let xRequestID = Self("X-Request-ID")!
    static let xLedgerPosition = Self("X-Ledger-Position")!
    static let xLedgerAfter = Self("X-Ledger-After")!
}

/// Checks the bearer token against a route's scopes.
struct Authenticator: Sendable {
    let tokens: APITokens

    /// The context, authenticated with one of `scopes`: 401 without a valid token, 403 when
    /// the token's scope is not allowed here. A token limited to one app may call only the
    /// routes that keep to that app (`perApp`; docs/http-api.md): 403 `app_not_allowed` elsewhere.
    func require(
        _ scopes: Set<APIScope>, _ request: Request, _ context: LedgerRequestContext, perApp: Bool = false
    ) throws -> LedgerRequestContext {
        // The scheme name is case-insensitive (RFC 9110 §11.1).
        guard let header = request.headers[.authorization], header.prefix(7).lowercased() == "bearer ",
              let entry = tokens.authenticate(String(header.dropFirst("Bearer ".count)))
        else {
            throw APIError(.unauthorized, "unauthorized", "a valid bearer token is required")
        }
        guard scopes.contains(entry.scope) else {
            throw APIError(.forbidden, "forbidden", "this token's scope (\(entry.scope.rawValue)) may not call this route")
        }
        if let app = entry.bundleId, !perApp {
            throw APIError(.forbidden, "app_not_allowed", "this token is limited to \(app), and this route is not kept to one app yet")
        }
        var context = context
        context.scope = entry.scope
        context.actor = entry.name
        context.app = entry.bundleId
        return context
    }
}
