import Hummingbird
import Logging
import NIOCore

/// A Hummingbird server on a free loopback port, for the floor benches.
enum FloorServer {
    /// Starts `router`'s application; returns its port and a function that stops it.
    static func start(router: Router<BasicRequestContext>, logger: Logger) async throws -> (port: Int, stop: @Sendable () async -> Void) {
        let (portStream, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        let task = Task { try await application.runService() }
        var ports = portStream.makeAsyncIterator()
        guard let port = await ports.next(), port > 0 else {
            task.cancel()
            throw BenchError("the floor server did not start")
        }
        return (port, { task.cancel(); _ = await task.result })
    }
}
