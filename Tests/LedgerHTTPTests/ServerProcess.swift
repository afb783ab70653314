import AsyncHTTPClient
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOHTTP1
import TestSupport
import Spawning

/// The built `purchase-ledger` binary run in a process of its own (as users run it), its output
/// in a file, its end observed without blocking a thread of the cooperative pool.
final class LedgerProcess: Sendable {
    let child: ChildProcess
    let arguments: [String]
    let output: URL

    private init(child: ChildProcess, arguments: [String], output: URL) {
        self.child = child
        self.arguments = arguments
        self.output = output
    }

    /// The tool beside the test bundle in the build folder (as `ToolRun` in CLITests finds it).
    static var binary: URL { ChildProcess.builtProduct("purchase-ledger") }

    /// This process's environment without the ledger's settings, `LOG_LEVEL=warning`, then `overrides`.
    static func environment(_ overrides: [String: String]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for name in [
            "LEDGER_HTTP_ADDRESS", "LEDGER_API_TOKENS", "LEDGER_CATALOG", "LEDGER_TRANSFER_POLICY", "LEDGER_COMMISSION",
            "APPLE_BUNDLE_ID", "APPLE_SHARED_SECRET", "APPLE_ROOT_CERTIFICATES",
            "APPLE_VERIFY_RECEIPT_PRODUCTION_URL", "APPLE_VERIFY_RECEIPT_SANDBOX_URL",
        ] {
            environment[name] = nil
        }
        environment["LOG_LEVEL"] = "warning"
        environment.merge(overrides) { $1 }
        return environment
    }

    /// Starts `purchase-ledger ARGUMENTS` with `environment` (see `environment(_:)`); `binary`
    /// another build of it (the previous release, in the upgrade test).
    static func start(_ arguments: [String], environment: [String: String], binary: URL = binary) throws -> LedgerProcess {
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw HarnessError("no purchase-ledger binary at \(binary.path): build it first (swift build --build-tests)")
        }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-process-\(UUID().uuidString).log")
        let child = try ChildProcess.start(binary.path, arguments, environment: Self.environment(environment), output: .file(output))
        return LedgerProcess(child: child, arguments: arguments, output: output)
    }

    /// Runs `purchase-ledger ARGUMENTS` to its end; returns how it ended and what it printed.
    static func run(
        _ arguments: [String], environment: [String: String], binary: URL = binary, within limit: Duration = .seconds(120)
    ) async throws -> (exit: ProcessExit, output: String) {
        let child = try start(arguments, environment: environment, binary: binary)
        defer { child.removeOutput() }
        do {
            let exit = try await child.waitForExit(within: limit)
            return (exit, child.outputText)
        } catch {
            child.send(SIGKILL)
            throw error
        }
    }

    var pid: Int32 { child.pid }
    /// How it ended; nil while it runs.
    var exit: ProcessExit? { child.exit }

    /// Sends `signal` while the process runs (never to a pid that may have been reused).
    func send(_ signal: Int32) {
        child.send(signal)
    }

    func waitForExit(within limit: Duration) async throws -> ProcessExit {
        guard let exit = try await child.waitForExit(within: limit) else {
            throw HarnessError("purchase-ledger \(arguments) did not end within \(limit):\n\(outputTail())")
        }
        return exit
    }

    /// Polls `GET /healthz` until it answers 200; fails at once when the process ends first.
    func waitUntilHealthy(_ client: LedgerClient, within limit: Duration = .seconds(60)) async throws {
        let deadline = ContinuousClock.now + limit
        var last = "no answer"
        while ContinuousClock.now < deadline {
            if let exit {
                throw HarnessError("the server ended (\(exit)) before it answered /healthz:\n\(outputTail())")
            }
            do {
                let answer = try await client.request(.GET, "/healthz", token: nil, timeout: .seconds(2))
                if answer.status == 200 { return }
                last = "HTTP \(answer.status) \(answer.json)"
            } catch {
                last = "\(error)"
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw HarnessError("\(client.base)/healthz did not answer 200 within \(limit) (last: \(last)):\n\(outputTail())")
    }

    var outputText: String { (try? String(contentsOf: output, encoding: .utf8)) ?? "" }
    func outputTail(_ characters: Int = 4_000) -> String { String(outputText.suffix(characters)) }
    func removeOutput() { try? FileManager.default.removeItem(at: output) }
}

/// An HTTP client of a ledger at `base` (a server in another process), answering as
/// `LedgerHarness` does. A refused connection fails at once instead of being retried.
struct LedgerClient: Sendable {
    let base: String
    let http: HTTPClient

    init(port: Int) {
        base = "http://127.0.0.1:\(port)"
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(2)
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func shutdown() async { try? await http.shutdown() }

    func request(
        _ method: HTTPMethod, _ path: String, body: String? = nil, token: String? = LedgerHarness.appToken, timeout: TimeAmount = .seconds(30)
    ) async throws -> LedgerHarness.Answer {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await http.execute(request, timeout: timeout)
        let bytes = try await response.body.collect(upTo: 8 << 20)
        let json = (try? JSONSerialization.jsonObject(with: Data(buffer: bytes))) as? [String: any Sendable] ?? [:]
        return LedgerHarness.Answer(status: Int(response.status.code), json: json, headers: response.headers.map { ($0.name, $0.value) })
    }

    func post(_ path: String, _ fields: [String: String]) async throws -> LedgerHarness.Answer {
        let data = try JSONSerialization.data(withJSONObject: fields)
        return try await request(.POST, path, body: String(decoding: data, as: UTF8.self))
    }
}

/// Waits, with a deadline, until `condition` holds; throws naming `what` if it never does.
func waitUntil(_ what: String, within limit: Duration, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw HarnessError("timed out after \(limit) waiting until \(what)")
}
