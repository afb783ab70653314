import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Primitives
import ServiceLifecycle
import Synchronization

/// A receiver of webhooks on loopback, as an app's backend would run one: it verifies each
/// message's Standard Webhooks signature and keeps every request it got, in arrival order. The
/// demo prints what it was told, the tests check it, the bench times it. `answer` decides the
/// status of each request (a flaky receiver answers 500 now and then); `goDown()` closes its
/// port and `comeBack()` opens the same one again (a receiver that is unreachable for a while).
public final class WebhookReceiver: Sendable {
    /// One request as it arrived.
    public struct Arrival: Sendable, Hashable {
        public var id: String
        public var timestamp: Int64
        public var body: Data
        public var signatureValid: Bool
        /// What the receiver answered.
        public var status: Int
        /// When it arrived, on this process's monotonic clock.
        public var at: ContinuousClock.Instant
        /// When it arrived by the receiver's wall clock (milliseconds since 1970), when it was
        /// given one: the bench's lag from an event's commit to its acknowledgement.
        public var receivedAtMs: Int64?

        /// The body's `type` and `data`, decoded.
        public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body) as? [String: Any]) ?? [:] }
        public var type: String { json["type"] as? String ?? "" }
        public var data: [String: Any] { json["data"] as? [String: Any] ?? [:] }
    }

    let signer: WebhookSigner
    let answer: @Sendable (String) -> Int
    let clock: WallClock?
    let logger: Logger
    private let state = Mutex<State>(State())

    struct State {
        var arrivals: [Arrival] = []
        var run: (group: ServiceGroup, task: Task<Void, any Error>)?
        var port = 0
        var host = "127.0.0.1"
        var onArrival: (@Sendable (Arrival) -> Void)?
    }

    public init(
        signer: WebhookSigner, clock: WallClock? = nil, logger: Logger = Logger(label: "webhook-receiver"),
        answer: @escaping @Sendable (String) -> Int = { _ in 204 }
    ) {
        self.signer = signer
        self.answer = answer
        self.clock = clock
        self.logger = logger
    }

    /// Called for each request as it arrives (the demo prints from it).
    public func onArrival(_ body: @escaping @Sendable (Arrival) -> Void) {
        state.withLock { $0.onArrival = body }
    }

    /// Starts listening (port 0: any free port); returns the port.
    @discardableResult
    public func start(host: String = "127.0.0.1", port: Int = 0) async throws -> Int {
        let (addresses, continuation) = AsyncStream<Int?>.makeStream()
        let router = Router()
        router.post("**") { [self] request, _ in try await self.receive(request) }
        let application = Application(
            router: router, configuration: .init(address: .hostname(host, port: port), serverName: "WebhookReceiver"),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port)
                continuation.finish()
            }, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [application], logger: logger))
        let task = Task {
            defer { continuation.finish() }
            try await group.run()
        }
        var iterator = addresses.makeAsyncIterator()
        guard let bound = await iterator.next() ?? nil else {
            try await task.value
            throw ReceiverError(description: "the webhook receiver did not start on \(host):\(port)")
        }
        state.withLock {
            $0.run = (group, task)
            $0.port = bound
            $0.host = host
        }
        return bound
    }

    public var port: Int { state.withLock { $0.port } }
    public var url: URL { state.withLock { URL(string: "http://\($0.host):\($0.port)/webhooks")! } }

    /// Closes the port: senders get a refused connection until `comeBack()`.
    public func goDown() async {
        guard let run = state.withLock({ state -> (group: ServiceGroup, task: Task<Void, any Error>)? in
            defer { state.run = nil }
            return state.run
        }) else { return }
        await run.group.triggerGracefulShutdown()
        _ = await run.task.result
    }

    /// Opens the same port again.
    public func comeBack() async throws {
        let (host, port) = state.withLock { ($0.host, $0.port) }
        // The port was this receiver's a moment ago; a sender's connection in TIME_WAIT does not
        // hold a listening port, so binding again succeeds.
        try await start(host: host, port: port)
    }

    public func stop() async { await goDown() }

    /// Every request so far, in arrival order.
    public var arrivals: [Arrival] { state.withLock { $0.arrivals } }

    /// The first acknowledged arrival of each id, in order of acknowledgement.
    public var acknowledged: [Arrival] {
        var seen = Set<String>()
        return arrivals.filter { (200..<300).contains($0.status) && seen.insert($0.id).inserted }
    }

    private func receive(_ request: Request) async throws -> Response {
        let buffer = try await request.body.collect(upTo: 1 << 20)
        let body = Data(buffer.readableBytesView)
        let id = request.headers[HTTPField.Name("webhook-id")!] ?? ""
        let timestampText = request.headers[HTTPField.Name("webhook-timestamp")!] ?? ""
        let signature = request.headers[HTTPField.Name("webhook-signature")!] ?? ""
        let timestamp = Int64(timestampText) ?? 0
        let valid = !id.isEmpty && signer.verify(id: id, timestamp: timestamp, body: body, header: signature)
        let status = valid ? answer(id) : 401
        let arrival = Arrival(id: id, timestamp: timestamp, body: body, signatureValid: valid, status: status, at: .now, receivedAtMs: clock?())
        let callback = state.withLock { state -> (@Sendable (Arrival) -> Void)? in
            state.arrivals.append(arrival)
            return state.onArrival
        }
        callback?(arrival)
        return Response(status: .init(code: status))
    }

    public struct ReceiverError: Error, CustomStringConvertible {
        public let description: String
    }
}
