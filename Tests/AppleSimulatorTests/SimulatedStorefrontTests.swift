import AppleSimulator
import Foundation
import Testing

/// The simulator signs each transaction's `storefront` (ISO 3166-1 alpha-3) as Apple does: the
/// Apple ID's storefront, `USA` unless a purchase names another.
@Suite("Simulated storefronts")
struct SimulatedStorefrontTests {
    @Test("a new Apple ID buys in USA; a purchase in DEU is signed DEU with Apple's storefront id, and so are its account's renewals")
    func signedStorefront() async throws {
        let simulator = try AppleSimulator(configuration: SimulatorHarness.configuration())
        let american = try await simulator.purchase(appleId: "us", productId: "com.example.coins100", environment: .production)
        let signedUS = try jwsPayload(american.signedTransaction)
        #expect(signedUS["storefront"] as? String == "USA")
        #expect(signedUS["storefrontId"] as? String == "143441")

        let german = try await simulator.purchase(
            appleId: "de", productId: "com.example.pro.monthly", environment: .production, storefront: "DEU")
        #expect(german.transaction.storefront == "DEU")
        let signedDE = try jwsPayload(german.signedTransaction)
        #expect(signedDE["storefront"] as? String == "DEU")
        #expect(signedDE["storefrontId"] as? String == "143443")

        _ = try await simulator.advance(days: 40)
        let periods = simulator.transactions(of: "de")
        #expect(periods.count >= 2, "the trial and a paid renewal")
        #expect(periods.allSatisfy { $0.storefront == "DEU" })
        let renewal = try #require(periods.last)
        #expect(try jwsPayload(try simulator.signedTransaction(renewal.transactionId))["storefront"] as? String == "DEU")
    }

    @Test("a storefront without an id the simulator knows is signed without storefrontId; one that is no alpha-3 code is refused")
    func unknownAndInvalid() async throws {
        let simulator = try AppleSimulator(configuration: SimulatorHarness.configuration())
        let swiss = try await simulator.purchase(appleId: "ch", productId: "com.example.coins100", environment: .production, storefront: "CHE")
        let signed = try jwsPayload(swiss.signedTransaction)
        #expect(signed["storefront"] as? String == "CHE")
        #expect(signed["storefrontId"] == nil)
        await #expect(throws: SimulatorError.self) {
            try await simulator.purchase(appleId: "xx", productId: "com.example.coins100", environment: .production, storefront: "de")
        }
    }
}
