import AppStore
import Foundation
import Testing

@testable import Ledger

/// Every sale knows its storefront (issue 24): a signed transaction's `storefront` is checked
/// on the way in and carried into the delivery or renewal it makes; Apple's Get Transaction Info
/// gives a receipt's sale its country later. Given (context, evidence) → when (decide, or a
/// projection's changes) → then (the events, the rows).
@Suite("Every sale knows its storefront")
struct StorefrontTests {
    static let bought = Given.t0 + Given.minute

    /// A signed transaction as StoreKit 2 or Apple's Server API gives it, decoded as Apple's JSON.
    static func signed(
        _ transactionId: String, _ productId: String, original: String? = nil, storefront: String?, expiresAt: Int64? = nil,
        purchasedAt: Int64 = StorefrontTests.bought
    ) throws -> SignedTransaction {
        var fields: [String: Any] = [
            "transactionId": transactionId, "originalTransactionId": original ?? transactionId, "bundleId": Given.bundleId,
            "productId": productId, "purchaseDate": Int(purchasedAt), "quantity": 1, "inAppOwnershipType": "PURCHASED",
            "environment": "Production", "price": 2990, "currency": "EUR",
        ]
        if let storefront { fields["storefront"] = storefront }
        if let expiresAt { fields["expiresDate"] = Int(expiresAt) }
        return try JSONDecoder().decode(SignedTransaction.self, from: JSONSerialization.data(withJSONObject: fields))
    }

    @Test("a signed transaction with storefront DEU delivers with storefront DEU")
    func deliveryCarriesStorefront() throws {
        // Given: Alice's order for the non-consumable, and Apple's signed transaction from Germany.
        let transaction = try Self.signed("2000000000000001", Given.removeAds, storefront: "DEU")
        let context = Given.context(openOrders: [Given.order("o-1", product: Given.removeAds)])

        // When
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "2000000000000001"), evidence: Evidence(signed: transaction), context: context)

        // Then
        #expect(decision.deliveries.map(\.transactionId) == ["2000000000000001"])
        let delivered = try #require(decision.appended(to: Streams.transaction("2000000000000001"))?.event?.asDelivered)
        #expect(delivered.storefront == "DEU")
        #expect(delivered.priceMilliunits == 2990 && delivered.currency == "EUR")
    }

    @Test("a receipt has no storefront: its delivery has none")
    func receiptHasNone() throws {
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: "T1"), evidence: Given.evidence(Given.entry("T1", Given.coins)),
            context: Given.context(openOrders: [Given.order("o-1")]))
        let delivered = try #require(decision.appended(to: Streams.transaction("T1"))?.event?.asDelivered)
        #expect(delivered.storefront == nil)
    }

    @Test("a renewal Apple signed in Japan is recorded with storefront JPN")
    func renewalCarriesStorefront() throws {
        // Given: S0 delivered to Alice; Apple's notification signs its renewal S1 in Japan.
        let period = 30 * Given.day
        let original = Given.delivered("S0", Given.monthly, to: Given.alice, purchasedAt: Self.bought, expiresAt: Self.bought + period)
        let renewed = try Self.signed(
            "S1", Given.monthly, original: "S0", storefront: "JPN", expiresAt: Self.bought + 2 * period, purchasedAt: Self.bought + period)

        // When
        let appends = PurchaseDecider.observe(
            Evidence(signed: renewed), source: "notification-1",
            context: Given.context(transactions: [.delivered(original)], owners: ["S0": Ownership(userId: Given.alice, streamVersion: 1)]))

        // Then
        let renewal = try #require(appends.appended(to: Streams.transaction("S1"))?.event?.asRenewal)
        #expect(renewal.storefront == "JPN")
        #expect(renewal.userId == Given.alice)
    }

    @Test("a storefront that is not three upper-case ASCII letters is no country",
          arguments: [("DEU", "DEU"), ("USA", "USA"), ("deu", nil), ("DE", nil), ("DEUT", nil), ("=1+", nil), ("", nil), ("ÄÖÜ", nil), ("D E", nil)]
                      as [(String, String?)])
    func checkedOnTheWayIn(_ storefront: String, _ expected: String?) throws {
        #expect(Storefront.countryCode(storefront) == expected)
        #expect(EvidenceEntry(signed: try Self.signed("T1", Given.coins, storefront: storefront)).storefront == expected)
    }

    @Test("a receipt's copy and a signed copy of one transaction merge, keeping the storefront")
    func mergeKeepsStorefront() throws {
        let evidence = Given.evidence(Given.entry("T1", Given.coins), EvidenceEntry(signed: try Self.signed("T1", Given.coins, storefront: "GBR")))
        #expect(evidence.entries.count == 1)
        #expect(evidence.entry("T1")?.storefront == "GBR")
    }

    @Test("a sale's revenue line takes the delivery's storefront, checked again on replay")
    func revenueLineCountry() {
        let place = EventPlace(position: 1, recordedAtMs: Given.t0)
        var delivered = Given.delivered("T1", Given.coins, to: Given.alice)
        delivered.storefront = "DEU"
        guard case .addRevenueSale(let sale)? = RevenueProjection().changes(for: .purchaseDelivered(delivered), at: place).first else {
            Issue.record("no sale")
            return
        }
        #expect(sale.country == "DEU")
        delivered.storefront = "=1+"
        guard case .addRevenueSale(let unchecked)? = RevenueProjection().changes(for: .purchaseDelivered(delivered), at: place).first else {
            Issue.record("no sale")
            return
        }
        #expect(unchecked.country == nil, "a value recorded before storefronts were checked is no country")
    }

    static func info(storefront: String?, price: Int64?, currency: String?) -> TransactionInfoRecorded {
        TransactionInfoRecorded(
            transactionId: "T1", originalTransactionId: "T0", environment: "Production", storefront: storefront, priceMilliunits: price,
            currency: currency, documentSha256: String(repeating: "0e", count: 32), recordedAtMs: Given.t0, source: "get-transaction-info")
    }

    @Test("Get Transaction Info gives the sale its country, and Apple's price only in an ISO 4217 currency")
    func transactionInfoRevenue() {
        let projection = RevenueProjection()
        let place = EventPlace(position: 9, recordedAtMs: Given.t0)
        #expect(projection.changes(for: .transactionInfoRecorded(Self.info(storefront: "GBR", price: 4_990, currency: "GBP")), at: place) == [
            .setRevenueTransactionInfo(transactionId: "T1", country: "GBR", applePrice: Money(minorUnits: 499, currency: "GBP")),
        ])
        #expect(projection.changes(for: .transactionInfoRecorded(Self.info(storefront: "GBR", price: 4_990, currency: "=HY")), at: place) == [
            .setRevenueTransactionInfo(transactionId: "T1", country: "GBR", applePrice: nil),
        ])
        #expect(projection.changes(for: .transactionInfoRecorded(Self.info(storefront: nil, price: 990, currency: "USD")), at: place) == [
            .setRevenueTransactionInfo(transactionId: "T1", country: nil, applePrice: Money(minorUnits: 99, currency: "USD")),
        ])
        #expect(projection.changes(for: .transactionInfoRecorded(Self.info(storefront: "gb", price: nil, currency: nil)), at: place).isEmpty)
    }

    @Test("Get Transaction Info's answer is in the transaction's timeline, and its original's")
    func transactionInfoTimeline() {
        let changes = TimelineProjection().changes(
            for: .transactionInfoRecorded(Self.info(storefront: "GBR", price: nil, currency: nil)), at: EventPlace(position: 7, recordedAtMs: Given.t0))
        #expect(changes == [
            .timelineEvent(subject: "transaction:T1", position: 7), .timelineLink(subject: "transaction:T0", includes: "transaction:T1"),
        ])
    }
}
