import AppStore
import Foundation

@testable import Ledger

/// Apple's real bodies in `Tests/Fixtures/apple` (their origins are in SOURCES.md there).
enum AppleFixtures {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/apple")

    static func data(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(name))
    }

    static func verifyReceipt(_ name: String) throws -> VerifyReceiptResponse {
        try VerifyReceiptResponse(jsonBytes: try data(name))
    }

    /// The evidence of a verifyReceipt body, as the service distils it.
    static func evidence(_ name: String, environmentFallback: String = "Production") throws -> Evidence {
        Evidence(response: try verifyReceipt(name), environmentFallback: environmentFallback)
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny seeded generator, so property tests shuffle the
/// same way on every run and a failure can be replayed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
