import Foundation
import Testing

@testable import AppStore
@testable import AppStoreClient

/// The client's settings. Its behaviour over HTTP is tested against the simulator
/// (Tests/AppleSimulatorTests/VerifyReceiptClientOverHTTPTests.swift).
@Suite("verifyReceipt configuration")
struct VerifyReceiptConfigurationTests {
    @Test("configuration reads the contract's variables and never prints the secret")
    func readsConfiguration() {
        let config = VerifyReceiptConfiguration(environment: ["APPLE_VERIFY_RECEIPT_PRODUCTION_URL": "http://127.0.0.1:9/p"], sharedSecret: "hush")
        #expect(config.productionURL == "http://127.0.0.1:9/p")
        #expect(config.sandboxURL == VerifyReceiptConfiguration.defaultSandboxURL)
        #expect(config.sharedSecret == "hush")
        #expect(!config.description.contains("hush"))
        #expect(VerifyReceiptConfiguration(environment: [:], sharedSecret: nil).productionURL == "https://buy.itunes.apple.com/verifyReceipt")
    }
}
