import Foundation
import Hummingbird
import NIOCore
import NIOFoundationCompat

/// Building and reading the JSON of the simulator's HTTP endpoints.
enum HTTPReplies {
    /// Request bodies above this are refused; a receipt is a few kilobytes.
    static let maxBodyBytes = 4 << 20

    static func json(_ data: Data, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(data: data)))
    }

    /// `value` as snake_case JSON.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        json(try AppleJSON.snakeCaseData(value), status: status)
    }

    static func empty(_ status: HTTPResponse.Status) -> Response {
        Response(status: status)
    }

    /// The request body decoded from snake_case JSON; a bad body is a `SimulatorError`.
    static func decode<T: Decodable>(_ type: T.Type, from request: Request) async throws -> T {
        let data = try await body(of: request)
        return try decode(type, from: data)
    }

    /// Like `decode`, for routes whose body is optional: nil when the body is empty.
    static func decodeIfPresent<T: Decodable>(_ type: T.Type, from request: Request) async throws -> T? {
        let data = try await body(of: request)
        return try data.isEmpty ? nil : decode(type, from: data)
    }

    private static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        do {
            return try decoder.decode(T.self, from: data)
        } catch {
            throw SimulatorError(.invalidRequest, "body is not the expected JSON: \(error)")
        }
    }

    static func body(of request: Request) async throws -> Data {
        var request = request
        return Data(buffer: try await request.collectBody(upTo: maxBodyBytes))
    }

    /// A `SimulatorError` as `{"error":{"code","message"}}` with a fitting HTTP status.
    static func error(_ error: SimulatorError) -> Response {
        let status: HTTPResponse.Status =
            switch error.code {
            case .unknownProduct, .unknownTransaction, .unknownSubscription, .unknownAccount: .notFound
            case .alreadyOwned, .alreadySubscribed, .environmentMismatch: .conflict
            default: .badRequest
            }
        let body = ControlAPI.ErrorBody(error: .init(code: error.code.rawValue, message: error.message))
        return (try? json(body, status: status)) ?? empty(status)
    }
}
