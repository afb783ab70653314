import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
import Spawning
#endif

@Suite("apple-simulator, the development executable")
struct AppleSimulatorCommandTests {
    @Test("serves Apple's verifyReceipt format on the given address and writes its root certificate")
    func serves() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sim-command-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let root = folder.appendingPathComponent("root.der")
        let log = folder.appendingPathComponent("simulator.log")
        // Port 0: the kernel hands it a port nobody holds, and the ready line says which (a port
        // drawn at random here could be a failover node's, or be taken by another test meanwhile).
        var environment = ProcessInfo.processInfo.environment
        environment["LOG_LEVEL"] = "info"  // the ready line is logged at info
        let child = try ChildProcess.start(
            ChildProcess.builtProduct("apple-simulator").path, ["--address", "127.0.0.1:0", "--root-certificate-out", root.path],
            environment: environment, input: .inherit, output: .file(log))
        defer { child.send(SIGTERM) }

        var port: Int?
        let deadline = ContinuousClock.now + .seconds(30)  // a busy CI machine starts the binary slowly
        while port == nil {
            port = Self.announcedPort(in: (try? String(contentsOf: log, encoding: .utf8)) ?? "")
            if port != nil { break }
            if let exit = child.exit {
                Issue.record("apple-simulator ended (\(exit)) before it said it was ready:\n\((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
                return
            }
            guard ContinuousClock.now < deadline else {
                Issue.record("apple-simulator did not say it was ready within 30 s:\n\((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }

        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port ?? 0)/sandbox/verifyReceipt")!)
        request.httpMethod = "POST"
        request.httpBody = Data(#"{"receipt-data": "not base64!"}"#.utf8)
        let (data, _) = try await URLSession.shared.data(for: request)
        let answer = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        #expect(answer?["status"] as? Int == 21002, "malformed receipt-data answers 21002, as Apple does")
        #expect((try? Data(contentsOf: root).count) ?? 0 > 100, "the root certificate was written")
    }

    /// The port of "APPLE_SERVER_API_URL=http://127.0.0.1:PORT " in the simulator's ready line,
    /// which it logs once it listens, with the port it was handed; nil until it is written whole.
    static func announcedPort(in text: String) -> Int? {
        let marker = "APPLE_SERVER_API_URL=http://127.0.0.1:"
        guard let range = text.range(of: marker) else { return nil }
        let rest = text[range.upperBound...]
        let digits = rest.prefix(while: \.isNumber)
        guard rest.dropFirst(digits.count).first == " " else { return nil }  // the whole number is written
        return Int(digits).flatMap { $0 > 0 ? $0 : nil }
    }
}
