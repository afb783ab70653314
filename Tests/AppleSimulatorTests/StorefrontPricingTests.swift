import AppStore
import AppleSimulator
import Foundation
import Testing

/// A purchase is charged in its storefront's currency, at the product's price tier there
/// (`PriceTerritory.all`): a 0.99 USD product is 0.99 EUR in DEU and 160 JPY in JPN. Renewals
/// and commitment instalments follow the Apple ID's storefront; a storefront outside the six
/// territories, or a price that is no tier, keeps the catalog's price.
@Suite("Purchases priced in their storefront")
struct StorefrontPricingTests {
    /// The transaction as signed, read by the ledger's own decoder.
    static func signed(_ simulator: AppleSimulator, _ transactionId: String) throws -> SignedTransaction {
        try SimulatedCommitmentTests.decode(SignedTransaction.self, jws: try simulator.signedTransaction(transactionId))
    }

    @Test("a 0.99 USD product costs 0.99 EUR in DEU and 160 JPY a unit in JPN; USA, an unknown storefront and a price that is no tier keep the catalog's")
    func oneTimePurchases() async throws {
        // The report tests' catalog: the default one plus 120 JPY gems, which is no yen tier.
        let simulator = try AppleSimulator(configuration: AppStoreConnectReportTests.configuration())
        let coins = "com.example.coins100"

        let german = try await simulator.purchase(appleId: "de", productId: coins, environment: .production, storefront: "DEU")
        #expect(german.transaction.priceMilliunits == 990 && german.transaction.currency == "EUR")
        let signedGerman = try Self.signed(simulator, german.transactionId)
        #expect(signedGerman.price == 990 && signedGerman.currency == "EUR")

        // Three units of the first tier: 3 × 160 JPY, in milliunits.
        let japanese = try await simulator.purchase(
            appleId: "jp", productId: coins, environment: .production, quantity: 3, storefront: "JPN")
        #expect(japanese.transaction.priceMilliunits == 480_000 && japanese.transaction.currency == "JPY")

        let american = try await simulator.purchase(appleId: "us", productId: coins, environment: .production)
        #expect(american.transaction.priceMilliunits == 990 && american.transaction.currency == "USD")
        // Switzerland is none of the six territories: no equivalent, the catalog's price.
        let swiss = try await simulator.purchase(appleId: "ch", productId: coins, environment: .production, storefront: "CHE")
        #expect(swiss.transaction.priceMilliunits == 990 && swiss.transaction.currency == "USD")
        // 120 JPY is no yen tier (160, 500, ...): kept in yen, even in DEU.
        let gems = try await simulator.purchase(
            appleId: "de", productId: "com.example.gems", environment: .production, storefront: "DEU")
        #expect(gems.transaction.priceMilliunits == 120_000 && gems.transaction.currency == "JPY")
    }

    @Test("renewals and commitment instalments bill the storefront's tier: 4.99 USD is 4.99 EUR in DEU and 800 JPY in JPN")
    func renewalsAndInstalments() async throws {
        let simulator = try AppleSimulator(configuration: SimulatorHarness.configuration(notificationVersions: [.v2]))
        // The monthly plan starts with a 7-day trial (price 0), then bills 4.99 EUR.
        try await simulator.purchase(
            appleId: "de", productId: "com.example.pro.monthly", environment: .production, storefront: "DEU")
        // The commitment's 4.99 USD instalment is the third tier: 800 JPY in JPN, 12 of them the
        // commitment (9600 JPY).
        let committed = try await simulator.purchase(
            appleId: "jp", productId: "com.example.pro.committed", environment: .production, storefront: "JPN")
        #expect(committed.transaction.priceMilliunits == 800_000 && committed.transaction.currency == "JPY")
        #expect(committed.transaction.commitment?.commitmentPriceMilliunits == 9_600_000)

        // Day 32: the trial became a paid period on day 7, and the commitment renewed on Feb 1.
        _ = try await simulator.advance(days: 32)
        let german = simulator.transactions(of: "de").sorted { $0.purchaseDateMs < $1.purchaseDateMs }
        #expect(german.map(\.priceMilliunits) == [0, 4990])
        #expect(german.last?.currency == "EUR")

        let japanese = try simulator.transactions(of: "jp").sorted { $0.purchaseDateMs < $1.purchaseDateMs }.map {
            try Self.signed(simulator, $0.transactionId)
        }
        #expect(japanese.map(\.price) == [800_000, 800_000])
        #expect(japanese.allSatisfy { $0.currency == "JPY" && $0.commitmentInfo?.commitmentPrice == 9_600_000 })

        // The renewal info announces the next instalment in yen too.
        let renewed = try #require(
            simulator.sentNotifications.last { $0.notificationType == "DID_RENEW" && $0.transactionId == japanese.last?.transactionId })
        let payload = try jwsPayload(try #require(renewed.signedPayload))
        let renewalJWS = try #require((payload["data"] as? [String: Any])?["signedRenewalInfo"] as? String)
        let renewal = try SimulatedCommitmentTests.decode(SignedRenewalInfo.self, jws: renewalJWS)
        #expect(renewal.renewalPrice == 800_000 && renewal.currency == "JPY")
        #expect(renewal.commitmentInfo?.commitmentRenewalPrice == 800_000)
    }
}
