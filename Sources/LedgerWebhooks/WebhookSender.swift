import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Primitives

/// Sends one message to one endpoint, signed for this attempt: a 2xx acknowledges; any other
/// status, a time-out or a refused connection is a failure with its reason in words.
public struct WebhookSender: Sendable {
    public let http: HTTPClient
    public let signer: WebhookSigner
    public let clock: WallClock
    /// docs/webhooks.md: an attempt that has no answer after this is a failure.
    public static let timeout: TimeAmount = .seconds(10)

    public init(http: HTTPClient, signer: WebhookSigner, clock: WallClock) {
        self.http = http
        self.signer = signer
        self.clock = clock
    }

    public enum Outcome: Sendable, Hashable {
        case acknowledged
        case failed(String)
    }

    public func send(_ message: WebhookMessage, to url: URL) async -> Outcome {
        let timestamp = clock() / 1_000
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: "user-agent", value: "PurchaseLedger-Webhooks/1")
        request.headers.add(name: "webhook-id", value: message.id)
        request.headers.add(name: "webhook-timestamp", value: String(timestamp))
        request.headers.add(name: "webhook-signature", value: signer.signature(id: message.id, timestamp: timestamp, body: message.body))
        request.body = .bytes(ByteBuffer(bytes: message.body))
        do {
            let response = try await http.execute(request, timeout: Self.timeout)
            // The answer's body is read (a connection kept alive needs it drained) but only its
            // start is kept, for the endpoint's last error.
            let body = try? await response.body.collect(upTo: 64 * 1024)
            if (200..<300).contains(response.status.code) { return .acknowledged }
            let excerpt = body.map { String(buffer: $0).prefix(200) } ?? ""
            return .failed("HTTP \(response.status.code)" + (excerpt.isEmpty ? "" : ": \(excerpt)"))
        } catch {
            return .failed(Self.describe(error))
        }
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout: return "no answer within 10 s"
            case .remoteConnectionClosed: return "the connection was closed before an answer"
            default: return "HTTP client: \(error)"
            }
        }
        let text = "\(error)"
        if text.contains("refused") || text.contains("ECONNREFUSED") { return "connection refused" }
        return String(text.prefix(200))
    }
}
