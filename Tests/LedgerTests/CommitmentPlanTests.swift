import AppStore
import Foundation
import Testing

@testable import Ledger

/// Monthly billing with a 12-month commitment (App Store Server API 1.21): each monthly
/// instalment is a transaction of its own, priced by Apple's signed `price`, numbered in the
/// commitment (`billingPeriodNumber` of `totalBillingPeriods`), with the commitment's price and
/// end. Given Apple's signed transaction → when the ledger decides and projects it → then the
/// commitment is carried into the events, each instalment is a sale at its own price, MRR counts
/// the instalment, and the subscriptions page can say what is still to come.
@Suite("Commitment plans: instalments billed monthly against a 12-month commitment")
struct CommitmentPlanTests {
    static let committed = "com.example.pro.committed"
    static let catalog = Catalog(products: [
        Product(productId: committed, kind: .autoRenewable, priceMinor: 499, currency: "USD"),
        Product(productId: Given.yearly, kind: .autoRenewable, priceMinor: 4999, currency: "USD"),
    ])
    static let t0 = Given.t0
    static let day = Given.day
    static let original = "3000000000000001"
    /// When the commitment bought at `t0` ends: twelve 30-day instalments later.
    static let commitmentEnds = t0 + 360 * day

    /// A signed transaction as Apple's `JWSTransactionDecodedPayload` writes one: instalment
    /// `period` of a 12-month commitment billed monthly, at 4.99 USD, the commitment 59.88.
    static func signed(_ transactionId: String, period: Int64, plan: String = "MONTHLY", commitmentInfo: String? = nil) throws -> SignedTransaction {
        let start = t0 + (period - 1) * 30 * day
        let info = commitmentInfo ?? #"{"billingPeriodNumber": \#(period), "totalBillingPeriods": 12, "commitmentPrice": 59880, "commitmentExpiresDate": \#(commitmentEnds).25}"#
        let json = """
            {
              "transactionId": "\(transactionId)",
              "originalTransactionId": "\(original)",
              "webOrderLineItemId": "4000000000000\(period)",
              "bundleId": "com.example.app",
              "productId": "\(committed)",
              "subscriptionGroupIdentifier": "20654195",
              "purchaseDate": \(start),
              "originalPurchaseDate": \(t0),
              "expiresDate": \(start + 30 * day),
              "quantity": 1,
              "type": "Auto-Renewable Subscription",
              "inAppOwnershipType": "PURCHASED",
              "signedDate": \(start),
              "environment": "Production",
              "transactionReason": "\(period == 1 ? "PURCHASE" : "RENEWAL")",
              "storefront": "USA",
              "storefrontId": "143441",
              "price": 4990,
              "currency": "USD",
              "billingPlanType": "\(plan)",
              "commitmentInfo": \(info)
            }
            """
        return try JSONDecoder().decode(SignedTransaction.self, from: Data(json.utf8))
    }

    static func context(owned: Bool = false, transactions: [TransactionRecord] = []) -> PurchaseContext {
        Given.context(
            transactions: transactions, owners: owned ? [original: Ownership(userId: Given.alice, streamVersion: 1)] : [:],
            catalog: catalog)
    }

    static let place = EventPlace(position: 1, recordedAtMs: t0)

    /// The sale lines the revenue projection makes of an event.
    static func sales(_ event: LedgerEvent) -> [RevenueSale] {
        RevenueProjection().changes(for: event, at: place).compactMap {
            if case .addRevenueSale(let sale) = $0 { return sale }
            return nil
        }
    }

    /// Instalments 1 … k as subscription entries, 30 days each from `t0`.
    static func instalments(_ k: Int64, plan: String? = "MONTHLY", price: Int64 = 4990, commitmentPrice: Int64 = 59880) -> [SubscriptionEntry] {
        (1...k).map { period in
            SubscriptionEntry(
                transactionId: "T\(period)", productId: committed, purchaseDateMs: t0 + (period - 1) * 30 * day,
                expiresDateMs: t0 + period * 30 * day, cancellationDateMs: nil, isTrial: false, isUpgraded: false,
                billingPlanType: plan,
                commitment: Commitment(periodNumber: period, totalPeriods: 12, priceMilliunits: commitmentPrice, expiresDateMs: commitmentEnds),
                priceMilliunits: price, currency: "USD")
        }
    }

    @Test("Apple's library fixture reads its billing plan and commitment, and the evidence keeps them")
    func appleFixture() throws {
        let data = try Data(contentsOf: AppleFixtures.directory.appendingPathComponent("jws-decoded-transaction-autorenew-asslib.json"))
        let transaction = try JSONDecoder().decode(SignedTransaction.self, from: data)
        #expect(transaction.billingPlanType == .monthly)
        #expect(transaction.commitmentInfo == TransactionCommitmentInfo(
            billingPeriodNumber: 3, totalBillingPeriods: 12, commitmentPrice: 119_880, commitmentExpiresDate: 1_698_150_000_000))
        let entry = EvidenceEntry(signed: transaction)
        #expect(entry.rawBillingPlanType == "MONTHLY")
        #expect(entry.commitment == Commitment(periodNumber: 3, totalPeriods: 12, priceMilliunits: 119_880, expiresDateMs: 1_698_150_000_000))
        let renewal = try JSONDecoder().decode(
            SignedRenewalInfo.self,
            from: try Data(contentsOf: AppleFixtures.directory.appendingPathComponent("jws-decoded-renewalinfo-billing-retry-grace-asslib.json")))
        #expect(renewal.renewalBillingPlanType == .monthly)
        #expect(renewal.commitmentInfo == RenewalCommitmentInfo(
            commitmentAutoRenewProductId: "com.example.product.commitment", rawCommitmentAutoRenewStatus: 1,
            rawCommitmentRenewalBillingPlanType: "MONTHLY", commitmentRenewalDate: 1_698_149_500_000, commitmentRenewalPrice: 9990))
        #expect(renewal.commitmentInfo?.commitmentWillAutoRenew == true)
    }

    @Test("the first instalment is delivered with its plan and commitment; its sale is the instalment, never the commitment's price")
    func firstInstalment() throws {
        // Given Apple's signed first instalment (its commitment's end written with a fraction of a millisecond).
        let transaction = try Self.signed(Self.original, period: 1)
        #expect(transaction.commitmentInfo?.commitmentExpiresDate == Self.commitmentEnds)
        // When the app posts it.
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: Self.original), evidence: Evidence(signed: transaction), context: Self.context())
        // Then the delivery carries it as Apple signed it.
        let delivered = try #require(decision.appended(to: Streams.transaction(Self.original))?.event?.asDelivered)
        #expect(delivered.billingPlanType == "MONTHLY")
        #expect(delivered.commitment == Commitment(periodNumber: 1, totalPeriods: 12, priceMilliunits: 59_880, expiresDateMs: Self.commitmentEnds))
        #expect(delivered.priceMilliunits == 4990 && delivered.currency == "USD")
        // The subscription entry knows where the commitment stands.
        let changes = SubscriptionsProjection().changes(for: .purchaseDelivered(delivered))
        guard case .mergeSubscriptionEntry(_, _, let entry)? = changes.first else {
            Issue.record("no subscription entry: \(changes)")
            return
        }
        #expect(entry.billingPlanType == "MONTHLY" && entry.commitment == delivered.commitment)
        #expect(entry.priceMilliunits == 4990 && entry.currency == "USD")
        // One sale, at Apple's signed instalment.
        let sales = Self.sales(.purchaseDelivered(delivered))
        #expect(sales.map(\.applePrice) == [Money(minorUnits: 499, currency: "USD")])
    }

    @Test("each later instalment a notification shows is a renewal numbered in the commitment, a sale at its own price")
    func laterInstalments() throws {
        let first = try #require(PurchaseDecider.decide(
            Given.submission(transaction: Self.original), evidence: Evidence(signed: try Self.signed(Self.original, period: 1)),
            context: Self.context()).appended(to: Streams.transaction(Self.original))?.event?.asDelivered)
        for period: Int64 in [2, 3] {
            let id = "300000000000000\(period)"
            // Given the subscription delivered, when Apple's DID_RENEW shows instalment `period`.
            let appends = PurchaseDecider.observe(
                Evidence(signed: try Self.signed(id, period: period)), source: "notification-\(period)",
                context: Self.context(owned: true, transactions: [.delivered(first)]))
            // Then it is a renewal carrying its number, priced by Apple.
            let renewal = try #require(appends.appended(to: Streams.transaction(id))?.event?.asRenewal)
            #expect(renewal.billingPlanType == "MONTHLY")
            #expect(renewal.commitment?.periodNumber == period && renewal.commitment?.totalPeriods == 12)
            #expect(renewal.priceMilliunits == 4990)
            #expect(Self.sales(.subscriptionRenewalSeen(renewal)).map(\.applePrice) == [Money(minorUnits: 499, currency: "USD")])
            // The observation of the subscription carries it too.
            let observed = try #require(appends.appended(to: Streams.subscription(Self.original))?.event?.asObserved)
            #expect(observed.entries.first { $0.transactionId == id }?.commitment?.periodNumber == period)
        }
    }

    @Test("a billing plan this build does not know is kept as Apple sent it, its commitment read leniently")
    func unknownPlanKeptRaw() throws {
        // Numbers written as strings, and a plan Apple may add later.
        let transaction = try Self.signed(
            Self.original, period: 2, plan: "QUARTERLY",
            commitmentInfo: #"{"billingPeriodNumber": "2", "totalBillingPeriods": "4", "commitmentPrice": "19960", "commitmentExpiresDate": "1731622460000", "addedLater": true}"#)
        #expect(transaction.billingPlanType == nil && transaction.rawBillingPlanType == "QUARTERLY")
        #expect(transaction.commitmentInfo == TransactionCommitmentInfo(
            billingPeriodNumber: 2, totalBillingPeriods: 4, commitmentPrice: 19_960, commitmentExpiresDate: 1_731_622_460_000))
        let decision = PurchaseDecider.decide(
            Given.submission(transaction: Self.original), evidence: Evidence(signed: transaction), context: Self.context())
        let delivered = try #require(decision.appended(to: Streams.transaction(Self.original))?.event?.asDelivered)
        #expect(delivered.billingPlanType == "QUARTERLY")
        #expect(delivered.commitment?.totalPeriods == 4)
        // The stored payload keeps it, and reads back the same.
        let stored = try LedgerEvent(type: PurchaseDelivered.eventType, payload: try delivered.encoded())
        #expect(stored.asDelivered == delivered)
        // The summary names the plan as sent; not knowing it, MRR names the period's price as a
        // month's worth (4.99 for 90 days: 1.66), as for any plan but a monthly commitment.
        let entries = Self.instalments(2, plan: "QUARTERLY").map { entry -> SubscriptionEntry in
            var entry = entry
            entry.expiresDateMs = entry.purchaseDateMs.map { $0 + 90 * Self.day }
            return entry
        }
        let summary = try #require(SubscriptionSummary(entries: entries, renewal: nil, nowMs: Self.t0 + 40 * Self.day))
        #expect(summary.commitment?.rawBillingPlanType == "QUARTERLY" && summary.commitment?.billingPlanType == nil)
        let usd = { (minor: Int64) in Money(minorUnits: minor, currency: "USD") }
        #expect(summary.monthly(latestSale: usd(499), serviceMs: 90 * Self.day) == usd(166))
        // Renewal info's plans too.
        let renewal = try JSONDecoder().decode(
            SignedRenewalInfo.self,
            from: Data(#"{"renewalBillingPlanType":"QUARTERLY","commitmentInfo":{"commitmentRenewalBillingPlanType":"WEEKLY","commitmentAutoRenewStatus":"0","commitmentRenewalDate":1731622460000.5}}"#.utf8))
        #expect(renewal.rawRenewalBillingPlanType == "QUARTERLY" && renewal.renewalBillingPlanType == nil)
        #expect(renewal.commitmentInfo?.rawCommitmentRenewalBillingPlanType == "WEEKLY" && renewal.commitmentInfo?.commitmentRenewalBillingPlanType == nil)
        #expect(renewal.commitmentInfo?.commitmentWillAutoRenew == false && renewal.commitmentInfo?.commitmentRenewalDate == 1_731_622_460_000)
        // A block of a shape this build cannot read at all never refuses the purchase: it is left out.
        let odd = try Self.signed(Self.original, period: 1, commitmentInfo: #"{"billingPeriodNumber": true, "totalBillingPeriods": [12]}"#)
        #expect(odd.commitmentInfo == nil && odd.rawBillingPlanType == "MONTHLY" && odd.price == 4990)
        let oddDecision = PurchaseDecider.decide(
            Given.submission(transaction: Self.original), evidence: Evidence(signed: odd), context: Self.context())
        #expect(oddDecision.deliveries.map(\.transactionId) == [Self.original])
    }

    @Test("MRR counts a monthly commitment's instalment, not its price over 12; a yearly plan billed up front counts its price over 12")
    func mrr() throws {
        let usd = { (minor: Int64) in Money(minorUnits: minor, currency: "USD") }
        let now = Self.t0 + 70 * Self.day
        // Instalment 3 of 12 at 4.99 — even were Apple to date its expiry at the commitment's
        // end, and even when the commitment's price is not 12 instalments (a discounted commitment).
        for commitmentPrice: Int64 in [59_880, 50_000] {
            let summary = try #require(SubscriptionSummary(entries: Self.instalments(3, commitmentPrice: commitmentPrice), renewal: nil, nowMs: now))
            #expect(summary.status == .active)
            #expect(summary.monthly(latestSale: usd(499), serviceMs: 30 * Self.day) == usd(499))
            #expect(summary.monthly(latestSale: usd(499), serviceMs: 360 * Self.day) == usd(499))
            #expect(summary.monthly(latestSale: nil, serviceMs: nil) == usd(499), "the instalment Apple signed stands alone")
        }
        // A yearly plan billed up front: 49.99 over 12 is 4.17, as before commitments.
        let yearly = SubscriptionEntry(
            transactionId: "Y1", productId: Given.yearly, purchaseDateMs: Self.t0, expiresDateMs: Self.t0 + 365 * Self.day,
            cancellationDateMs: nil, isTrial: false, isUpgraded: false, billingPlanType: "BILLED_UPFRONT", commitment: nil,
            priceMilliunits: 49_990, currency: "USD")
        let upfront = try #require(SubscriptionSummary(entries: [yearly], renewal: nil, nowMs: now))
        #expect(upfront.commitment == nil)
        #expect(upfront.monthly(latestSale: usd(4999), serviceMs: 365 * Self.day) == usd(417))
        // A free trial adds nothing.
        var trial = Self.instalments(1)
        trial[0].isTrial = true
        let inTrial = try #require(SubscriptionSummary(entries: trial, renewal: nil, nowMs: Self.t0 + Self.day))
        #expect(inTrial.monthly(latestSale: usd(499), serviceMs: 30 * Self.day) == nil)
    }

    @Test("after k instalments the committed value still to come is the instalment × (n − k)", arguments: [1, 2, 3, 11, 12] as [Int64])
    func stillToCome(afterInstalments k: Int64) throws {
        // Given instalments 1 … k, seen in any order, while the k-th runs.
        let now = Self.t0 + ((k - 1) * 30 + 10) * Self.day
        let summary = try #require(SubscriptionSummary(entries: Array(Self.instalments(k).reversed()), renewal: nil, nowMs: now))
        let commitment = try #require(summary.commitment)
        #expect(commitment.periodNumber == k && commitment.totalPeriods == 12)
        #expect(commitment.remainingPeriods == 12 - k)
        #expect(commitment.instalment == Money(minorUnits: 499, currency: "USD"))
        #expect(commitment.commitmentPrice == Money(minorUnits: 5988, currency: "USD"))
        #expect(commitment.expiresAtMs == Self.commitmentEnds)
        #expect(commitment.stillToCome == Money(minorUnits: 499 * (12 - k), currency: "USD"))
        if k == 3 { #expect(commitment.stillToCome?.decimal == "44.91") }
    }

    @Test("a commitment paid up front has nothing still to come; a subscription with no commitment has no standing")
    func upfrontAndNone() throws {
        let upfront = try #require(SubscriptionSummary(entries: Self.instalments(1, plan: "BILLED_UPFRONT"), renewal: nil, nowMs: Self.t0))
        #expect(upfront.commitment?.remainingPeriods == 11)
        #expect(upfront.commitment?.stillToCome == Money(minorUnits: 0, currency: "USD"))
        let plain = SubscriptionEntry(
            transactionId: "M1", productId: Given.monthly, purchaseDateMs: Self.t0, expiresDateMs: Self.t0 + 30 * Self.day,
            cancellationDateMs: nil, isTrial: false, isUpgraded: false)
        #expect(try #require(SubscriptionSummary(entries: [plain], renewal: nil, nowMs: Self.t0)).commitment == nil)
    }

    @Test("two copies of one instalment complete each other whichever is merged first, as the table's upsert does")
    func mergeKeepsWhatEitherKnows() throws {
        let signed = try #require(Self.instalments(2).last)
        // The same transaction as a receipt lists it: no plan, no commitment, no price.
        let receipt = SubscriptionEntry(
            transactionId: signed.transactionId, productId: signed.productId, purchaseDateMs: signed.purchaseDateMs,
            expiresDateMs: signed.expiresDateMs, cancellationDateMs: nil, isTrial: false, isUpgraded: false)
        #expect(receipt.merged(with: signed) == signed)
        #expect(signed.merged(with: receipt) == signed)
        // Field by field: a commitment one copy knows in part is completed by the other.
        let partial = Commitment(periodNumber: 2, totalPeriods: nil, priceMilliunits: nil, expiresDateMs: nil)
        let rest = Commitment(periodNumber: nil, totalPeriods: 12, priceMilliunits: 59_880, expiresDateMs: Self.commitmentEnds)
        #expect(Commitment.merged(partial, rest) == signed.commitment)
        #expect(Commitment.merged(rest, partial) == signed.commitment)
        #expect(Commitment.of(periodNumber: nil, totalPeriods: nil, priceMilliunits: nil, expiresDateMs: nil) == nil)
    }

    @Test("a delivery or renewal recorded before commitments were reads without one; a new one stores it in snake_case")
    func payloadEvolution() throws {
        let old = #"{"transaction_id":"T1","original_transaction_id":"T1","product_id":"p","kind":"auto_renewable","quantity":1,"user_id":"u","environment":"Production","is_trial":false,"grants":{},"submission_id":"s","match":"no_order"}"#
        let delivered = try #require(try LedgerEvent(type: PurchaseDelivered.eventType, payload: Data(old.utf8)).asDelivered)
        #expect(delivered.billingPlanType == nil && delivered.commitment == nil)
        #expect(!String(decoding: try delivered.encoded(), as: UTF8.self).contains("commitment"), "absent fields stay absent")
        let oldRenewal = #"{"transaction_id":"T2","original_transaction_id":"T1","product_id":"p","user_id":"u","environment":"Production","is_trial":false,"source":"n"}"#
        let renewal = try #require(try LedgerEvent(type: SubscriptionRenewalSeen.eventType, payload: Data(oldRenewal.utf8)).asRenewal)
        #expect(renewal.billingPlanType == nil && renewal.commitment == nil)

        var committed = delivered
        committed.billingPlanType = "MONTHLY"
        committed.commitment = Commitment(periodNumber: 1, totalPeriods: 12, priceMilliunits: 59_880, expiresDateMs: Self.commitmentEnds)
        let json = String(decoding: try committed.encoded(), as: UTF8.self)
        #expect(json.contains(#""billing_plan_type":"MONTHLY""#))
        #expect(json.contains(#""commitment":{"expires_date_ms":\#(Self.commitmentEnds),"period_number":1,"price_milliunits":59880,"total_periods":12}"#), "\(json)")
    }
}
