import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("purchase-ledger apple-simulator")
struct AppleSimulatorCommandTests {
    @Test("serves Apple's verifyReceipt format on the given address and writes its root certificate")
    func serves() async throws {
        let port = Int.random(in: 20_000..<60_000)
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("sim-root-\(UUID().uuidString).der")
        defer { try? FileManager.default.removeItem(at: root) }
        let process = Process()
        process.executableURL = ToolRun.binary
        process.arguments = ["apple-simulator", "--address", "127.0.0.1:\(port)", "--root-certificate-out", root.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { process.terminate() }

        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/sandbox/verifyReceipt")!)
        request.httpMethod = "POST"
        request.httpBody = Data(#"{"receipt-data": "not base64!"}"#.utf8)
        var answer: [String: Any]?
        for _ in 0..<300 where answer == nil {  // up to 30 s: a busy CI machine starts the binary slowly
            if let (data, _) = try? await URLSession.shared.data(for: request) {
                answer = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            } else {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        #expect(answer?["status"] as? Int == 21002, "malformed receipt-data answers 21002, as Apple does")
        #expect((try? Data(contentsOf: root).count) ?? 0 > 100, "the root certificate was written")
    }
}
