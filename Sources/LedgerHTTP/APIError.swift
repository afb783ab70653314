import Foundation
import HTTPTypes
import Hummingbird
import Ledger
import LedgerService
import LedgerStore
import NIOCore
import NIOHTTP1

/// An error answered as `{"error": {"code", "message"}}` with its HTTP status (docs/http-api.md).
/// The message never quotes a receipt, token or secret.
public struct APIError: Error, HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    public var code: String
    public var message: String
    /// Extra headers (`Retry-After` for 503).
    public var headers: HTTPFields = [:]

    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public static func invalidRequest(_ message: String) -> APIError { APIError(.badRequest, "invalid_request", message) }

    /// docs/http-api.md lists oversize bodies with the other malformed requests: code
    /// `invalid_request`, with HTTP's own status for them, 413.
    static func bodyTooLarge() -> APIError {
        APIError(.contentTooLarge, "invalid_request", "the body is larger than \(APILimits.maximumBodyBytes) bytes")
    }

    public static func databaseUnavailable() -> APIError {
        var error = APIError(.serviceUnavailable, "database_unavailable", "the ledger's database cannot be reached; nothing was recorded, try again")
        error.headers[.retryAfter] = "1"
        return error
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try JSONResponse.make(ErrorBody(error: .init(code: code, message: message)), status: status)
        for field in headers { response.headers.append(field) }
        return response
    }

    /// The API's answer for any error a handler threw.
    static func from(_ error: any Error) -> APIError? {
        // The database's own errors of "PostgreSQL is not reachable now", wherever a route met
        // them, are the 503 every command answers for them (retried by clients), never a 500.
        switch LedgerServiceError.mapping(error) {
        case let error as APIError:
            return error
        case let error as LedgerServiceError:
            switch error.code {
            case .invalidRequest: return .invalidRequest(error.message)
            case .unknownProduct: return APIError(.notFound, "unknown_product", error.message)
            case .notFound: return APIError(.notFound, "not_found", error.message)
            case .recordedBeforeErasure: return APIError(.conflict, "recorded_before_erasure", error.message)
            case .unauthenticated: return APIError(.unauthorized, "unauthorized", error.message)
            case .databaseUnavailable: return .databaseUnavailable()
            case .idempotencyConflict: return APIError(.conflict, "idempotency_conflict", error.message)
            case .insufficientBalance: return APIError(.conflict, "insufficient_balance", error.message)
            case .extensionRefused: return APIError(.unprocessableContent, "extension_refused", error.message)
            case .unknownAppAccountToken: return APIError(.unprocessableContent, "unknown_app_account_token", error.message)
            case .ownedByAnotherUser: return APIError(.conflict, "owned_by_another_user", error.message)
            case .familyShared: return APIError(.unprocessableContent, "family_shared", error.message)
            case .appleRefused: return APIError(.unprocessableContent, "apple_refused", error.message)
            case .appleUnavailable:
                var answer = APIError(.serviceUnavailable, "apple_unavailable", error.message)
                answer.headers[.retryAfter] = "30"
                return answer
            case .appleNotConfigured: return APIError(.serviceUnavailable, "apple_not_configured", error.message)
            case .busy:
                var answer = APIError(.serviceUnavailable, "busy", error.message)
                answer.headers[.retryAfter] = "1"
                return answer
            case .projectionsBehind:
                var answer = APIError(.serviceUnavailable, "projections_behind", error.message)
                answer.headers[.retryAfter] = "1"
                return answer
            default: return nil
            }
        case is NIOTooManyBytesError:
            return .bodyTooLarge()
        case is HTTPParserError:
            return .invalidRequest("the request is not well-formed HTTP/1.1")
        case let error as HTTPError:
            switch error.status {
            case .notFound: return APIError(.notFound, "not_found", "no such route")
            case .methodNotAllowed: return APIError(.methodNotAllowed, "method_not_allowed", "this route does not take that method")
            case .contentTooLarge: return .bodyTooLarge()
            default: return APIError(error.status, "http_\(error.status.code)", error.body ?? error.status.reasonPhrase)
            }
        default:
            return nil
        }
    }
}

/// `{"error": {"code", "message"}}`.
struct ErrorBody: Encodable {
    struct Detail: Encodable {
        var code: String
        var message: String
    }
    var error: Detail
}
