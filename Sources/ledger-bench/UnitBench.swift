import AppStoreClient
import AppleSimulator
import AsyncHTTPClient
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import LedgerService
import Logging
import NIOCore
import Postgres
import Spawning

/// `serve` as the unit runs it, a process of its own given a `NOTIFY_SOCKET`: how long from the
/// spawn to `READY=1`, its resident memory idle and at its peak under the flow's load, the flow's
/// receipts through it, and how long from SIGTERM to its exit. Run with the release binary and
/// with the debug one in the same session, so the two are compared on the same machine and hour.
enum UnitBench {
    struct Started {
        let child: ChildProcess
        let notify: NotifySocket
        let readyMs: Double
        let port: Int
        let log: URL
    }

    /// Spawns `binary serve` on `conninfo` and waits for READY=1 (at most `limit`).
    static func start(
        binary: String, conninfo: String, apple: RunningAppleSimulator?, root: URL?, catalog: URL?, limit: Duration = .seconds(600)
    ) async throws -> Started {
        let notify = try NotifySocket()
        let port = try freePort()
        var environment = ProcessInfo.processInfo.environment
        environment["DATABASE_URL"] = conninfo
        environment["NOTIFY_SOCKET"] = notify.path
        environment["LOG_LEVEL"] = "error"
        environment["APPLE_BUNDLE_ID"] = "com.example.app"
        environment["LEDGER_API_TOKENS"] = "\(FlowBench.token):app"
        environment["LEDGER_RECONCILE_INTERVAL"] = "0"
        if let apple, let root, let catalog {
            environment["APPLE_VERIFY_RECEIPT_PRODUCTION_URL"] = apple.productionURL
            environment["APPLE_VERIFY_RECEIPT_SANDBOX_URL"] = apple.sandboxURL
            environment["APPLE_ROOT_CERTIFICATES"] = root.path
            environment["LEDGER_CATALOG"] = catalog.path
        }
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("unit-bench-\(UUID().uuidString.prefix(8)).log")
        let spawned = ContinuousClock.now
        let child = try ChildProcess.start(binary, ["serve", "--address", "127.0.0.1:\(port)"], environment: environment, output: .file(log))
        let deadline = spawned + limit
        while !notify.received().contains(where: { $0.split(separator: "\n").contains("READY=1") }) {
            if let exit = child.exit {
                throw BenchError("serve ended (\(exit)) before READY=1: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
            }
            guard ContinuousClock.now < deadline else {
                child.send(SIGKILL)
                throw BenchError("no READY=1 within \(limit)")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        let ready = ContinuousClock.now - spawned
        return Started(child: child, notify: notify, readyMs: milliseconds(ready), port: port, log: log)
    }

    /// `ledger-bench unit BINARY CLIENTS SECONDS`: a fresh schema, READY, idle memory, the flow,
    /// peak memory, SIGTERM. Prints `ready_ms idle_rss_mb peak_rss_mb rate p50 p99 stop_ms`.
    static func run(binary: String, conninfo: String, clients: Int, seconds: Double) async throws -> String {
        var logger = Logger(label: "bench.unit")
        logger.logLevel = .error
        let (schemaConninfo, pool) = try await migratedSchema("unit", conninfo: conninfo, logger: logger)
        await pool.close()
        let apple = try await AppleSimulatorServer(simulator: try AppleSimulator(configuration: .init(machineClock: .system)), logger: logger).start()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("unit-bench-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let root = folder.appendingPathComponent("root.der"), catalog = folder.appendingPathComponent("catalog.json")
        try Data(apple.simulator.rootCertificateDER).write(to: root)
        try Data(FlowBench.catalog.utf8).write(to: catalog)
        let server = try await start(binary: binary, conninfo: schemaConninfo, apple: apple, root: root, catalog: catalog)
        defer { try? FileManager.default.removeItem(at: server.log) }
        let base = "http://127.0.0.1:\(server.port)"
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            // Idle: serving, nothing asked of it for two seconds.
            try await Task.sleep(for: .seconds(2))
            let idle = resident(server.child.pid).current
            let purchases = try await prepare(count: Int((seconds + 1) * 1_500), base: base, client: client, simulator: apple.simulator)
            let figures = try await ClosedLoop.run(clients: clients, seconds: seconds, items: purchases) { purchase in
                try await FlowBench.submit(purchase, to: base, client: client)
            }
            let peak = resident(server.child.pid).peak
            try await client.shutdown()
            let stopping = ContinuousClock.now
            server.child.send(SIGTERM)
            guard let exit = try await server.child.waitForExit(within: .seconds(60)), exit.status == 0, !exit.signaled else {
                throw BenchError("serve did not exit 0 within 60 s of SIGTERM")
            }
            let stopped = ContinuousClock.now - stopping
            try await apple.stop()
            return String(
                format: "%.0f %.1f %.1f %.0f %.2f %.2f %.0f", server.readyMs, idle, peak, figures.rate, figures.p50, figures.p99,
                milliseconds(stopped))
        } catch {
            try? await client.shutdown()
            server.child.send(SIGKILL)
            try? await apple.stop()
            throw error
        }
    }

    /// `ledger-bench ready BINARY`: READY=1 on the database as it is (a grown log), then SIGTERM.
    /// Prints the milliseconds to READY and the resident megabytes then.
    static func ready(binary: String, conninfo: String) async throws -> String {
        let server = try await start(binary: binary, conninfo: conninfo, apple: nil, root: nil, catalog: nil)
        defer { try? FileManager.default.removeItem(at: server.log) }
        let memory = resident(server.child.pid).current
        server.child.send(SIGTERM)
        _ = try await server.child.waitForExit(within: .seconds(60))
        return String(format: "%.0f %.1f", server.readyMs, memory)
    }

    /// Orders through the API, as the app's backend makes them, each bought on the simulator.
    static func prepare(
        count: Int, base: String, client: HTTPClient, simulator: AppleSimulator
    ) async throws -> [(user: String, receipt: String, transaction: String)] {
        try await withThrowingTaskGroup(of: [(user: String, receipt: String, transaction: String)].self) { group in
            let workers = 8
            for worker in 0..<workers {
                group.addTask {
                    var made: [(user: String, receipt: String, transaction: String)] = []
                    for index in stride(from: worker, to: count, by: workers) {
                        let user = "user-\(index)"
                        var request = HTTPClientRequest(url: base + "/v1/orders")
                        request.method = .POST
                        request.headers.add(name: "Authorization", value: "Bearer \(FlowBench.token)")
                        request.headers.add(name: "Content-Type", value: "application/json")
                        request.body = .bytes(ByteBuffer(string: #"{"user_id": "\#(user)", "product_id": "com.example.coins100"}"#))
                        let response = try await client.execute(request, timeout: .seconds(30))
                        let body = try await response.body.collect(upTo: 1 << 20)
                        guard response.status == .created,
                              let json = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any],
                              let token = json["app_account_token"] as? String
                        else { throw BenchError("an order was answered \(response.status.code)") }
                        let purchase = try await simulator.purchase(
                            appleId: "apple-\(index)", productId: "com.example.coins100", environment: .production,
                            appAccountToken: UUID(uuidString: token))
                        made.append((user, purchase.receiptData, purchase.transactionId))
                    }
                    return made
                }
            }
            var all: [(user: String, receipt: String, transaction: String)] = []
            for try await some in group { all += some }
            return all
        }
    }

    /// VmRSS and VmHWM of `pid`, in MiB.
    static func resident(_ pid: pid_t) -> (current: Double, peak: Double) {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Double {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }),
                  let kb = Double(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
            else { return 0 }
            return kb / 1024
        }
        return (field("VmRSS"), field("VmHWM"))
    }

    /// A port the kernel hands out now, released for `serve` to take.
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw BenchError("no free port: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15
    }
}
