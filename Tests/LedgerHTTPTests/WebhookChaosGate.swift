import AsyncHTTPClient
import Foundation
// Not a declared dependency of this target: it builds because LedgerHTTP links Hummingbird, but
// Package.swift should name `.product(name: "Hummingbird", package: "hummingbird")` for it.
// `WebhookReceiver.answer` is synchronous, so a receiver that keeps a request unanswered needs
// a server of its own.
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// A door on loopback in front of a `WebhookReceiver`: it forwards every webhook request to the
/// receiver and hands its answer back, unless it is holding. While it holds, requests wait at it
/// unanswered, so their sender has a delivery in flight; the chaos test kills the server then.
/// `dropHeld()` answers what it held with 503 without forwarding (their sender is gone) and
/// opens the door, so the receiver sees those messages only if the next server sends them again.
final class WebhookChaosGate: Sendable {
    /// A request waiting at the gate.
    struct Held: Sendable {
        /// Its `webhook-id`.
        let id: String
        /// When it arrived, on this process's monotonic clock.
        let since: ContinuousClock.Instant
    }

    /// A held request and how to let it go on: true forwards it, false drops it.
    private typealias Waiting = (held: Held, resume: CheckedContinuation<Bool, Never>)

    private struct State {
        var holding = false
        var waiting: [Waiting] = []
        var run: Task<Void, any Error>?
        var target: URL?
    }

    /// The headers a Standard Webhooks request carries, forwarded as they came.
    private static let forwarded: Set<String> = ["content-type", "user-agent", "webhook-id", "webhook-timestamp", "webhook-signature"]

    private let state = Mutex(State())

    init() {}

    /// Starts listening on a free loopback port, forwarding to `target`; returns the gate's URL.
    @discardableResult
    func start(forwardingTo target: URL) async throws -> URL {
        let (addresses, continuation) = AsyncStream<Int?>.makeStream()
        let router = Router()
        router.post("**") { [self] request, _ in try await self.pass(request) }
        var logger = Logger(label: "webhook-chaos-gate")
        logger.logLevel = .warning
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "WebhookChaosGate"),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port)
                continuation.finish()
            }, logger: logger)
        let run = Task {
            defer { continuation.finish() }
            try await application.runService(gracefulShutdownSignals: [])
        }
        var iterator = addresses.makeAsyncIterator()
        guard let port = await iterator.next() ?? nil, let url = URL(string: "http://127.0.0.1:\(port)/webhooks") else {
            run.cancel()
            _ = await run.result
            throw HarnessError("the webhook gate in front of \(target) did not start")
        }
        state.withLock {
            $0.run = run
            $0.target = target
        }
        return url
    }

    /// From now on, requests wait at the gate unanswered until `dropHeld()`.
    func hold() {
        state.withLock { $0.holding = true }
    }

    /// The requests waiting at the gate now, oldest first.
    var held: [Held] {
        state.withLock { $0.waiting.map { $0.held } }
    }

    /// Opens the gate: the requests held are answered 503 and never reach the receiver; later
    /// ones are forwarded. Returns the requests it dropped.
    @discardableResult
    func dropHeld() -> [Held] {
        let waiting = state.withLock { state -> [Waiting] in
            defer {
                state.waiting = []
                state.holding = false
            }
            return state.waiting
        }
        for entry in waiting { entry.resume.resume(returning: false) }
        return waiting.map { $0.held }
    }

    /// Drops what it holds and closes its port.
    func stop() async {
        dropHeld()
        guard let run = state.withLock({ state -> Task<Void, any Error>? in
            defer { state.run = nil }
            return state.run
        }) else { return }
        run.cancel()
        _ = await run.result
    }

    private func pass(_ request: Request) async throws -> Response {
        // Read whole before holding, so a held request is one the sender finished sending.
        let body = try await request.body.collect(upTo: 1 << 20)
        let id = request.headers.first(where: { $0.name.canonicalName == "webhook-id" })?.value ?? ""
        let forward = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let holding = state.withLock { state -> Bool in
                guard state.holding else { return false }
                state.waiting.append((Held(id: id, since: .now), continuation))
                return true
            }
            if !holding { continuation.resume(returning: true) }
        }
        guard forward, let target = state.withLock({ $0.target }) else {
            return Response(status: .serviceUnavailable)
        }
        var onward = HTTPClientRequest(url: target.absoluteString)
        onward.method = .POST
        for field in request.headers where Self.forwarded.contains(field.name.canonicalName) {
            onward.headers.add(name: field.name.rawName, value: field.value)
        }
        onward.body = .bytes(body)
        let response = try await HTTPClient.shared.execute(onward, timeout: .seconds(10))
        _ = try await response.body.collect(upTo: 1 << 20)
        return Response(status: .init(code: Int(response.status.code)))
    }
}
