import AppleSimulator
import AppStoreClient
import AsyncHTTPClient
import Foundation
import LedgerHTTP
import LedgerService
import LedgerStore
import Logging
import Spawning
import NIOCore
import Synchronization
import X509

#if canImport(Glibc)
import Glibc
#endif

/// `Tools/bench ha`, second part: how long purchases stop when the primary dies. 8 clients
/// submit receipts (bought up front) through the real server on the pg_auto_failover set,
/// retrying what gets no 2xx; after `before` seconds the primary's node is killed
/// (`Tools/cluster kill-primary`). Prints "KILL_TO_FIRST_2XX_S RETRIED DELIVERED".
enum FailoverBench {
    static func run(conninfo: String, before: Double, after: Double) async throws {
        var logger = Logger(label: "bench.failover")
        logger.logLevel = .critical
        let (schemaConninfo, pool) = try await migratedSchema("failover", conninfo: conninfo, logger: logger)
        let (apple, server) = try await FlowBench.startServers(conninfo: schemaConninfo, logger: logger)
        let purchases = try await FlowBench.prepare(count: Int((before + after + 60) * 400), server: server, simulator: apple.simulator)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let shared = Shared()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    while true {
                        if let stop = shared.end.withLock({ $0 }), ContinuousClock.now > stop { return }
                        let index = shared.state.withLock { s -> Int in s.next += 1; return s.next - 1 }
                        guard index < purchases.count else { return }
                        while true {
                            let started = ContinuousClock.now
                            do {
                                try await FlowBench.submit(purchases[index], to: server.baseURL, client: client)
                                shared.state.withLock { s in
                                    s.delivered += 1
                                    if let killed = s.killedAt, started > killed, s.firstAfter == nil { s.firstAfter = .now }
                                }
                                break
                            } catch {
                                shared.state.withLock { $0.retried += 1 }
                                try? await Task.sleep(for: .milliseconds(100))
                            }
                        }
                    }
                }
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(Int(before * 1000)))
                _ = try? await killPrimary()
                shared.state.withLock { $0.killedAt = .now }
                shared.end.withLock { $0 = ContinuousClock.now + .milliseconds(Int(after * 1000)) }
            }
        }
        try await client.shutdown()
        try await server.stop()
        try await apple.stop()
        await pool.close()
        let s = shared.state.withLock { $0 }
        guard let killed = s.killedAt, let first = s.firstAfter else { throw BenchError("no 2xx after the kill within \(after) s") }
        print(String(format: "%.2f %d %d", (first - killed).seconds, s.retried, s.delivered))
    }

    struct State { var next = 0; var killedAt: ContinuousClock.Instant?; var firstAfter: ContinuousClock.Instant?; var retried = 0; var delivered = 0 }

    /// What the clients and the killer share.
    final class Shared: Sendable {
        let state = Mutex(State())
        let end = Mutex<ContinuousClock.Instant?>(nil)
    }

    /// `Tools/cluster kill-primary`, run from the repository's root (as Tools/bench runs this);
    /// its output (the killed node's name) goes to standard error: standard output is the
    /// figure Tools/bench reads.
    static func killPrimary() async throws {
        let exit = try await ChildProcess.start(
            "Tools/cluster", ["kill-primary"], input: .inherit, output: .standardError, newProcessGroup: false
        ).waitForExit()
        guard exit == .success else { throw BenchError("Tools/cluster kill-primary failed (\(exit))") }
    }
}
