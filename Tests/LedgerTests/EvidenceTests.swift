import AppStore
import Testing

@testable import Ledger

/// `Evidence(response:environmentFallback:)` on Apple's real bodies: each transaction once,
/// whichever lists carried it, and renewal information keyed by original transaction id.
@Suite("Evidence from real verifyReceipt bodies")
struct EvidenceTests {
    @Test("imdhemy's 42 in_app renewals and one latest_receipt_info item: 43 transactions, none lost, none twice")
    func mergesByTransactionId() throws {
        let response = try AppleFixtures.verifyReceipt("verifyreceipt-ios7-subscription-42-in_app-monthly-yearly-imdhemy.json")
        let evidence = Evidence(response: response, environmentFallback: "Sandbox")
        let ids = response.allTransactions.map(\.transactionID)

        #expect(ids.count == 43)
        #expect(evidence.entries.count == 43)
        #expect(Set(evidence.entries.map(\.transactionId)) == Set(ids))
        #expect(evidence.entries.filter(\.inApp).count == 42)
        #expect(evidence.bundleId == "com.some.thing")
        #expect(evidence.environment == "Production")
        #expect(Set(evidence.entries.map(\.originalTransactionId)) == ["1000000723811158"])
        #expect(Set(evidence.entries.map(\.productId)) == ["one_month_subscription", "one_year_subscription"])
        // In the order first seen: in_app as Apple listed it (unsorted), then latest_receipt_info.
        #expect(evidence.entries.first?.transactionId == "1000000739289145")
        #expect(evidence.entries.last?.transactionId == "1000000767477815")

        let yearly = try #require(evidence.entry("1000000739289145"))
        #expect(yearly.productId == "one_year_subscription")
        #expect(yearly.purchaseDateMs == 1_602_065_218_000)
        #expect(yearly.expiresDateMs == 1_602_068_818_000)
        #expect(yearly.quantity == 1)
        #expect(yearly.inApp)
        #expect(!yearly.isTrial && !yearly.isRefunded)

        let latest = try #require(evidence.entry("1000000767477815"))
        #expect(latest.productId == "one_month_subscription")
        #expect(latest.purchaseDateMs == 1_611_147_600_000)
        #expect(latest.expiresDateMs == 1_611_147_900_000)
        #expect(!latest.inApp)

        // Merging the same transactions again changes nothing.
        let twice = Evidence(bundleId: evidence.bundleId, environment: evidence.environment, entries: evidence.entries + evidence.entries)
        #expect(twice.entries == evidence.entries)
    }

    @Test("imdhemy's pending_renewal_info is the renewal state of original 1000000723811158, observed at request_date_ms")
    func pendingRenewalInfo() throws {
        let evidence = try AppleFixtures.evidence("verifyreceipt-ios7-subscription-42-in_app-monthly-yearly-imdhemy.json")
        #expect(evidence.renewals == ["1000000723811158": RenewalObservation(
            observedAtMs: 1_628_954_383_379, autoRenew: false, autoRenewProductId: "one_month_subscription",
            inBillingRetry: false, gracePeriodExpiresMs: nil)])
    }

    @Test("Venice's iOS 6 body: bundle id from bid, environment from the fallback, receipt and latest_expired_receipt_info one transaction")
    func iOS6Body() throws {
        let name = "verifyreceipt-ios6-status-21006-latest_expired_receipt_info-venice.json"
        let evidence = try AppleFixtures.evidence(name, environmentFallback: "Sandbox")
        #expect(evidence.bundleId == "com.foo.bar")
        #expect(evidence.environment == "Sandbox")
        #expect(try AppleFixtures.evidence(name, environmentFallback: "Production").environment == "Production")
        #expect(evidence.entries.count == 1)

        let entry = try #require(evidence.entry("140000527258824"))
        #expect(entry.originalTransactionId == "140000527258824")
        #expect(entry.productId == "com.foo.product1")
        #expect(entry.purchaseDateMs == 1_549_781_388_000)
        #expect(entry.expiresDateMs == 1_550_386_188_000)  // iOS 6 `expires_date` is itself milliseconds
        #expect(entry.isTrial)
        #expect(entry.inApp)
    }

    @Test("Monza's cancellation body: both transactions refunded at cancellation_date_ms, reason 0")
    func cancellation() throws {
        let evidence = try AppleFixtures.evidence("verifyreceipt-ios7-subscription-cancellation_reason-monza.json")
        #expect(evidence.bundleId == "com.example.app")
        #expect(evidence.environment == "Sandbox")
        #expect(evidence.entries.map(\.transactionId) == ["1000000218147651", "1000000218147500"])

        let renewal = try #require(evidence.entry("1000000218147651"))
        #expect(renewal.isRefunded)
        #expect(renewal.cancellationDateMs == 1_466_127_848_000)
        #expect(renewal.cancellationReason == 0)
        #expect(renewal.originalTransactionId == "1000000218147500")
        #expect(!renewal.isUpgraded && !renewal.isRevocation)
        #expect(renewal.inApp)

        let original = try #require(evidence.entry("1000000218147500"))
        #expect(original.isRefunded)
        #expect(original.isTrial)
        #expect(!original.inApp)
        #expect(evidence.renewals.isEmpty)
    }

    @Test("Monza's trial body: the duplicated 1000000218147501 is one entry keeping the copy's expiry, trials flagged")
    func trial() throws {
        let evidence = try AppleFixtures.evidence("verifyreceipt-ios7-subscription-trial-pending_renewal-monza.json")
        #expect(evidence.entries.map(\.transactionId) == ["1000000218147651", "1000000218147501", "1000000218147500"])

        let duplicated = try #require(evidence.entry("1000000218147501"))
        #expect(duplicated.expiresDateMs == 1_466_127_147_996)
        #expect(duplicated.purchaseDateMs == 1_466_126_848_000)
        #expect(duplicated.isTrial)
        #expect(!duplicated.inApp)
        #expect(evidence.entry("1000000218147500")?.isTrial == true)
        #expect(evidence.entry("1000000218147651")?.isTrial == false)
        #expect(evidence.entries.allSatisfy { !$0.isRefunded })

        #expect(evidence.renewals == ["1000000218147500": RenewalObservation(
            observedAtMs: 1_466_184_881_174, autoRenew: false, autoRenewProductId: "renew_product_id",
            inBillingRetry: false, gracePeriodExpiresMs: nil)])
    }

    @Test("aporat's body with ids and dates as JSON numbers reads like the string one")
    func numericTypes() throws {
        let evidence = try AppleFixtures.evidence("verifyreceipt-ios7-sandbox-multi-product-numeric-types-aporat.json")
        #expect(evidence.bundleId == "com.myapp")
        #expect(evidence.environment == "Sandbox")
        #expect(Set(evidence.entries.map(\.transactionId)) == [
            "1000000156455961", "1000000156014803", "1000000104232856", "1000000093384828",
        ])
        let renewal = try #require(evidence.entry("1000000104232856"))
        #expect(renewal.originalTransactionId == "1000000093384828")
        #expect(renewal.expiresDateMs == 1_394_619_485_000)
        #expect(evidence.renewals["original_transaction_id_value"]?.autoRenew == true)
        #expect(evidence.renewals["original_transaction_id_value"]?.observedAtMs == 1_432_485_078_143)
    }

    @Test("Venice's 2014 body: the expiry read from the date text, auto-renew off")
    func dateTextsAndAutoRenewOff() throws {
        let evidence = try AppleFixtures.evidence("verifyreceipt-ios7-autorenew-off-pending_renewal-venice.json")
        let entry = try #require(evidence.entry("1000000070107111"))
        #expect(entry.expiresDateMs == 1_403_966_873_000)  // "2014-06-28 14:47:53 Etc/GMT"
        #expect(entry.originalTransactionId == "1000000061051111")
        #expect(evidence.renewals["37xxxxxxxxx89"] == RenewalObservation(
            observedAtMs: 1_401_924_047_883, autoRenew: false, autoRenewProductId: "com.foo.product1",
            inBillingRetry: false, gracePeriodExpiresMs: nil))
    }

    @Test("merging two copies of a transaction keeps what either knew; the first copy's dates win")
    func mergeKeepsWhatEitherKnew() {
        let evidence = Given.evidence(
            Given.entry("S1", Given.monthly, original: "S0", purchasedAt: Given.t0, inApp: false),
            Given.entry("S1", Given.monthly, original: "S0", purchasedAt: Given.t0 + 1, expiresAt: Given.t0 + Given.day,
                        cancelledAt: Given.t0 + Given.minute, cancellationReason: 1, isTrial: true, isUpgraded: true,
                        token: "6f1c2a5e-1111-4000-8000-000000000001", inApp: true))
        #expect(evidence.entries == [Given.entry(
            "S1", Given.monthly, original: "S0", purchasedAt: Given.t0, expiresAt: Given.t0 + Given.day,
            cancelledAt: Given.t0 + Given.minute, cancellationReason: 1, isTrial: true, isUpgraded: true,
            token: "6f1c2a5e-1111-4000-8000-000000000001", inApp: true)])
    }
}
