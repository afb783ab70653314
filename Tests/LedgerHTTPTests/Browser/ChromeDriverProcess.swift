import AsyncHTTPClient
import Foundation
import NIOCore
import Spawning
import TestSupport

/// Debian's chromedriver in a process of its own, on a loopback port it picks itself.
///
/// Everything it and its Chromium write goes to a fresh folder: its output, and its temporary
/// files (`TMPDIR`: the profile chromedriver makes for each session, and Chromium's shared
/// memory files under `--disable-dev-shm-usage`). `terminate()` removes the folder, so nothing
/// is left in /tmp even when a session could not be deleted.
final class ChromeDriverProcess: Sendable {
    let child: ChildProcess
    /// The process's own folder (output and temporary files).
    let folder: URL
    /// "http://127.0.0.1:PORT".
    let baseURL: String

    private init(child: ChildProcess, folder: URL, baseURL: String) {
        self.child = child
        self.folder = folder
        self.baseURL = baseURL
    }

    var output: URL { folder.appendingPathComponent("chromedriver.log") }
    var pid: Int32 { child.pid }
    /// The exit status (or signal) once it ended; nil while it runs.
    var exitStatus: Int32? { child.exit?.status }

    func outputTail(_ characters: Int = 3_000) -> String {
        String(((try? String(contentsOf: output, encoding: .utf8)) ?? "").suffix(characters))
    }

    /// Starts chromedriver and returns once `GET /status` says it is ready for a session.
    ///
    /// `--port=0` makes chromedriver bind a free port itself and print "ChromeDriver was
    /// started successfully on port N." (checked with ChromeDriver 156): no window between
    /// picking a port and binding it. Tried again up to `attempts` times if it does not come up.
    static func start(within limit: Duration = .seconds(30), attempts: Int = 3) async throws -> ChromeDriverProcess {
        var failures: [String] = []
        for attempt in 1...max(attempts, 1) {
            do {
                return try await startOnce(within: limit)
            } catch let error as ChromeDriverStartFailure {
                failures.append(error.description)
                // Said, not swallowed: a start that needed a second try is worth seeing in the log.
                let next = attempt < attempts ? "trying again" : "giving up"
                FileHandle.standardError.write(Data("chromedriver start, attempt \(attempt) of \(attempts), failed (\(next)): \(error.description)\n".utf8))
            }
        }
        throw ChromeDriverStartFailure(description: "chromedriver did not start (\(attempts) attempts):\n" + failures.joined(separator: "\n---\n"))
    }

    private static func startOnce(within limit: Duration) async throws -> ChromeDriverProcess {
        // Short: Chromium puts a Unix socket in its profile under TMPDIR, and a socket path over
        // 107 bytes kills it at start ("Socket path too long").
        let folder = URL(fileURLWithPath: "/tmp").appendingPathComponent("plb-\(UUID().uuidString.prefix(8))")
        let temporary = folder.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        let output = folder.appendingPathComponent("chromedriver.log")
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = temporary.path
        let child: ChildProcess
        do {
            // Without --log-path the log goes to stderr: the same file as the port announcement.
            child = try ChildProcess.start(
                BrowserAvailability.chromedriver, ["--port=0", "--log-level=WARNING"], environment: environment, output: .file(output))
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw ChromeDriverStartFailure(description: "could not run \(BrowserAvailability.chromedriver): \(error)")
        }

        do {
            let baseURL = try await waitUntilReady(output: output, child: child, within: limit)
            return ChromeDriverProcess(child: child, folder: folder, baseURL: baseURL)
        } catch {
            // Also on cancellation: no chromedriver is left running.
            await child.stop()
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
    }

    /// Reads the port chromedriver announces, then polls `GET /status` until it is ready;
    /// returns "http://127.0.0.1:PORT". Fails at once when the process ends first.
    private static func waitUntilReady(output: URL, child: ChildProcess, within limit: Duration) async throws -> String {
        let deadline = ContinuousClock.now + limit
        func tail() -> String { String(((try? String(contentsOf: output, encoding: .utf8)) ?? "").suffix(3_000)) }

        var port: Int?
        while true {
            port = announcedPort(in: (try? String(contentsOf: output, encoding: .utf8)) ?? "")
            if port != nil { break }
            if let status = child.exit?.status {
                throw ChromeDriverStartFailure(description: "chromedriver ended (status \(status)) before it announced its port:\n\(tail())")
            }
            guard ContinuousClock.now < deadline else {
                throw ChromeDriverStartFailure(description: "chromedriver did not announce its port within \(limit):\n\(tail())")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let baseURL = "http://127.0.0.1:\(port ?? 0)"

        var last = "no answer"
        while true {
            if let status = child.exit?.status {
                throw ChromeDriverStartFailure(description: "chromedriver ended (status \(status)) before /status said ready:\n\(tail())")
            }
            do {
                let status = try await WebDriverTransport.send(.GET, baseURL + "/status", timeout: .seconds(2))
                if status["ready"]?.bool == true { return baseURL }
                last = status.text
            } catch let error as WebDriverError {
                last = "\(error)"
            }
            guard ContinuousClock.now < deadline else {
                throw ChromeDriverStartFailure(description: "chromedriver at \(baseURL) was not ready within \(limit) (last: \(last)):\n\(tail())")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The N of "ChromeDriver was started successfully on port N." (nil until it is printed).
    static func announcedPort(in text: String) -> Int? {
        let marker = "started successfully on port "
        guard let range = text.range(of: marker) else { return nil }
        let digits = text[range.upperBound...].prefix(while: \.isNumber)
        guard text[range.upperBound...].dropFirst(digits.count).first == "." else { return nil }  // the whole number is written
        return Int(digits).flatMap { $0 > 0 ? $0 : nil }
    }

    /// Stops chromedriver (SIGTERM, then SIGKILL after `grace`) and removes its folder.
    /// Never throws; safe to call twice.
    func terminate(grace: Duration = .seconds(5)) async {
        await child.stop(grace: grace)
        try? FileManager.default.removeItem(at: folder)
    }
}

struct ChromeDriverStartFailure: Error, CustomStringConvertible {
    var description: String
}
