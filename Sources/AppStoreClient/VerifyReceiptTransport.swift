import AppStore
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat

/// Sends one verifyReceipt request. `HTTPVerifyReceiptTransport` is the real one; the seam lets
/// a caller send through its own HTTP stack. Tests use the real one against the AppleSimulator.
public protocol VerifyReceiptTransport: Sendable {
    /// POSTs `body` (JSON) to `url` and returns the HTTP status and the response bytes.
    ///
    /// Throws `AppStoreError` with `.timeout`, `.connectionFailed` or `.invalidConfiguration`.
    func post(url: String, body: Data, timeout: Duration, maximumResponseBytes: Int) async throws(AppStoreError) -> (httpStatus: Int, body: Data)
}

/// The verifyReceipt transport over AsyncHTTPClient.
public struct HTTPVerifyReceiptTransport: VerifyReceiptTransport {
    private let httpClient: HTTPClient

    /// Uses `httpClient`, whose lifecycle stays with the caller (default: the process-wide
    /// shared client, which needs no shutdown).
    public init(httpClient: HTTPClient = .shared) {
        self.httpClient = httpClient
    }

    public func post(url: String, body: Data, timeout: Duration, maximumResponseBytes: Int) async throws(AppStoreError) -> (httpStatus: Int, body: Data) {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(data: body))
        let nanoseconds = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        do {
            let response = try await httpClient.execute(request, timeout: .nanoseconds(nanoseconds))
            var buffer = try await response.body.collect(upTo: maximumResponseBytes)
            let bytes = buffer.readData(length: buffer.readableBytes) ?? Data()
            return (Int(response.status.code), bytes)
        } catch {
            throw Self.map(error)
        }
    }

    /// Maps AsyncHTTPClient's errors to ours; its descriptions hold no request body, so the type
    /// and description are safe to keep as `underlying`.
    static func map(_ error: any Error) -> AppStoreError {
        let underlying = "\(type(of: error)): \(error)"
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .writeTimeout, .connectTimeout, .getConnectionFromPoolTimeout:
                return AppStoreError(.timeout, "verifyReceipt did not answer in time", underlying: underlying)
            case .invalidURL, .emptyHost, .emptyScheme:
                return AppStoreError(.invalidConfiguration, "the verifyReceipt URL is unusable", underlying: underlying)
            default:
                break
            }
        }
        if error is NIOTooManyBytesError {
            return AppStoreError(.connectionFailed, "the verifyReceipt answer exceeded the size limit", underlying: underlying)
        }
        return AppStoreError(.connectionFailed, "the verifyReceipt request failed", underlying: underlying)
    }
}
