import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import Primitives

/// One HTTP exchange with an Apple API, kept whole: how a request goes out with its bearer token
/// and how its answer (or its failure) is kept verbatim. `AppleAPICore` decides what to do with
/// it.
struct AppleHTTPExchange: Sendable {
    let httpClient: HTTPClient
    /// When each attempt started (the machine's clock).
    let clock: WallClock
    let timeout: Duration
    /// The largest body kept; Apple's pages are far smaller.
    let bodyLimit: Int

    /// One exchange; never throws: a failure is an attempt without a status. `Retry-After` in
    /// whole seconds, as Apple sends it with 429.
    func send(_ method: HTTPMethod, url: String, body: Data? = nil, bearer: String) async -> (ServerAPIAttempt, retryAfter: Int?) {
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(bearer)")
        request.headers.add(name: "Accept", value: "application/json")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: body))
        }
        let startedAtMs = clock()
        let started = ContinuousClock.now
        do {
            let response = try await httpClient.execute(request, timeout: .milliseconds(Millis.of(timeout)))
            let bytes = try await response.body.collect(upTo: bodyLimit)
            let retryAfter = response.headers.first(name: "Retry-After").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            return (ServerAPIAttempt(
                method: method.rawValue, url: url, httpStatus: Int(response.status.code), body: Array(buffer: bytes),
                latencyMs: Millis.of(ContinuousClock.now - started), startedAtMs: startedAtMs, failure: nil), retryAfter)
        } catch {
            let timedOut = (error as? HTTPClientError).map {
                [.deadlineExceeded, .readTimeout, .connectTimeout, .getConnectionFromPoolTimeout].contains($0)
            } ?? false
            return (ServerAPIAttempt(
                method: method.rawValue, url: url, httpStatus: nil, body: [], latencyMs: Millis.of(ContinuousClock.now - started),
                startedAtMs: startedAtMs, failure: timedOut ? "timeout" : "connection_failed"), nil)
        }
    }
}
