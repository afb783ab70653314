import AppStore
import Foundation

/// `ledger-bench apple`: decoding a verifyReceipt body into the model, next to
/// `JSONSerialization` parsing the same bytes (the ceiling), measured in the same run.
/// Replay decodes millions of these; the target is at least 0.5× JSONSerialization.
enum AppleBench {
    static func run(fixture: URL) throws {
        let bytes = try Data(contentsOf: fixture)
        let megabytes = Double(bytes.count) / 1_000_000
        // Warm up both, and check the model reads what the fixture holds.
        let check = try VerifyReceiptResponse(jsonBytes: bytes)
        _ = try JSONSerialization.jsonObject(with: bytes)
        let transactions = check.allTransactions.count

        let rounds = 5
        var modelRates: [Double] = []
        var serializationRates: [Double] = []
        for _ in 0..<rounds {
            serializationRates.append(try rate(seconds: 1) { _ = try JSONSerialization.jsonObject(with: bytes) })
            modelRates.append(try rate(seconds: 1) { _ = try VerifyReceiptResponse(jsonBytes: bytes) })
        }
        let model = median(modelRates), ceiling = median(serializationRates)
        func line(_ name: String, _ perSecond: Double) -> String {
            "\(name.padding(toLength: 34, withPad: " ", startingAt: 0)) \(format(perSecond, 0)) bodies/s  \(format(perSecond * megabytes, 1)) MB/s"
        }
        let report = [
            "apple: \(fixture.lastPathComponent) (\(bytes.count) bytes, \(transactions) transactions), median of \(rounds) × 1 s",
            line("VerifyReceiptResponse (model)", model),
            line("JSONSerialization (ceiling)", ceiling),
            "ratio model / JSONSerialization: \(format(model / ceiling, 2))× (target ≥ 0.50×)",
        ]
        FileHandle.standardOutput.write(Data((report.joined(separator: "\n") + "\n").utf8))
    }

    /// Runs `body` repeatedly for about `seconds` and returns calls per second.
    private static func rate(seconds: Double, _ body: () throws -> Void) throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start.advanced(by: .milliseconds(Int(seconds * 1000)))
        var count = 0
        while clock.now < deadline {
            for _ in 0..<16 { try body() }
            count += 16
        }
        let elapsed = clock.now - start
        return Double(count) / elapsed.seconds
    }

    private static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    private static func format(_ value: Double, _ decimals: Int) -> String {
        String(format: "%.\(decimals)f", value)
    }
}
