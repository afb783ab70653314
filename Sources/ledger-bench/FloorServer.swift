import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// A Hummingbird server on a free loopback port, for the floor benches.
enum FloorServer {
    /// Starts `router`'s application; returns its port and a function that stops it gracefully.
    static func start(router: Router<BasicRequestContext>, logger: Logger) async throws -> (port: Int, stop: @Sendable () async -> Void) {
        let (portStream, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [application], logger: logger))
        let task = Task { try await group.run() }
        var ports = portStream.makeAsyncIterator()
        guard let port = await ports.next(), port > 0 else {
            await group.triggerGracefulShutdown()
            throw BenchError("the floor server did not start")
        }
        return (port, {
            await group.triggerGracefulShutdown()
            _ = await task.result
        })
    }
}
