import AppStoreClient
import AppleSimulator
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Testing

/// What the tests that run `serve` as a process of its own share: the Apple simulator, its root
/// and the test catalog written to a folder, the environment `serve` needs against them, and the
/// servers and clients the test starts, every one of them ended on every path (the servers'
/// output recorded when the test fails).
final class ServedFixture: Sendable {
    let apple: RunningAppleSimulator
    /// `serve`'s settings: the database, the simulator, the catalog, the app token.
    let environment: [String: String]
    private let folder: URL
    private let started = Mutex<(servers: [LedgerProcess], clients: [LedgerClient])>(([], []))

    private init(apple: RunningAppleSimulator, environment: [String: String], folder: URL) {
        self.apple = apple
        self.environment = environment
        self.folder = folder
    }

    /// Runs `body` with a simulator and `serve`'s environment on `conninfo`, then ends what it
    /// started; on an error, kills the servers and records their output before rethrowing.
    static func with(
        conninfo: String, simulator configuration: AppleSimulator.Configuration = AppleSimulator.Configuration(machineClock: .system),
        _ body: (ServedFixture) async throws -> Void
    ) async throws {
        let apple = try await AppleSimulatorServer(simulator: try AppleSimulator(configuration: configuration)).start()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pl-served-\(UUID().uuidString)")
        let fixture: ServedFixture
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let root = folder.appendingPathComponent("simulator-root.der")
            let catalog = folder.appendingPathComponent("catalog.json")
            try Data(apple.simulator.rootCertificateDER).write(to: root)
            try Data(LedgerHarness.catalog.utf8).write(to: catalog)
            fixture = ServedFixture(apple: apple, environment: [
                "DATABASE_URL": conninfo, "APPLE_BUNDLE_ID": LedgerHarness.bundleId, "LEDGER_API_TOKENS": "\(LedgerHarness.appToken):app",
                "APPLE_VERIFY_RECEIPT_PRODUCTION_URL": apple.productionURL, "APPLE_VERIFY_RECEIPT_SANDBOX_URL": apple.sandboxURL,
                "APPLE_ROOT_CERTIFICATES": root.path, "LEDGER_CATALOG": catalog.path, "LOG_LEVEL": "warning",
            ], folder: folder)
        } catch {
            try? await apple.stop()
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        do {
            try await body(fixture)
        } catch {
            await fixture.end(failed: true)
            throw error
        }
        await fixture.end(failed: false)
    }

    /// Starts `binary ARGUMENTS` with the fixture's environment and `extra`.
    func start(_ arguments: [String], extra: [String: String] = [:], binary: URL = LedgerProcess.binary) throws -> LedgerProcess {
        let server = try LedgerProcess.start(arguments, environment: environment.merging(extra) { $1 }, binary: binary)
        started.withLock { $0.servers.append(server) }
        return server
    }

    /// A client of the server on `port`, shut down when the test ends (AsyncHTTPClient traps in
    /// debug when one is not).
    func client(port: Int) -> LedgerClient {
        let client = LedgerClient(port: port)
        started.withLock { $0.clients.append(client) }
        return client
    }

    private func end(failed: Bool) async {
        let (servers, clients) = started.withLock { $0 }
        for client in clients { await client.shutdown() }
        if failed {
            for server in servers { server.send(SIGKILL) }
            for server in servers { _ = try? await server.waitForExit(within: .seconds(10)) }
            Issue.record("server output:\n\(servers.map { $0.outputTail() }.joined(separator: "\n---\n"))")
        }
        for server in servers { server.removeOutput() }
        try? await apple.stop()
        try? FileManager.default.removeItem(at: folder)
    }
}
