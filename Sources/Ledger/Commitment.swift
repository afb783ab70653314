import AppStore

/// Where one transaction of a subscription stands in a commitment, as Apple signed it
/// (`commitmentInfo`, App Store Server API 1.21): a 12-month commitment billed monthly is twelve
/// transactions, each an instalment (its own `price`, a sale), numbered 1 … 12.
///
/// Recorded on deliveries, renewals and subscription entries; absent from events recorded before
/// it was, and from transactions seen only in a receipt (receipts carry no commitment). Every
/// field is optional, as Apple's are: a block that says something is kept, never refused.
/// https://developer.apple.com/documentation/appstoreserverapi/transactioncommitmentinfo
public struct Commitment: Sendable, Hashable, Codable {
    /// Apple's `billingPeriodNumber`: the instalment this transaction pays, 1 … `totalPeriods`.
    public var periodNumber: Int64?
    /// Apple's `totalBillingPeriods`: the instalments of the whole commitment (12).
    public var totalPeriods: Int64?
    /// Apple's `commitmentPrice`: what the whole commitment costs, in milliunits of the
    /// transaction's currency (59880 = 59.88). Never booked: each instalment is the sale.
    public var priceMilliunits: Int64?
    /// Apple's `commitmentExpiresDate`: when the commitment ends; milliseconds since 1970, UTC.
    public var expiresDateMs: Int64?

    public init(periodNumber: Int64?, totalPeriods: Int64?, priceMilliunits: Int64?, expiresDateMs: Int64?) {
        self.periodNumber = periodNumber
        self.totalPeriods = totalPeriods
        self.priceMilliunits = priceMilliunits
        self.expiresDateMs = expiresDateMs
    }

    /// The commitment Apple's block states; nil when it is absent or states nothing.
    public static func of(_ info: TransactionCommitmentInfo?) -> Commitment? {
        guard let info else { return nil }
        return of(
            periodNumber: info.billingPeriodNumber, totalPeriods: info.totalBillingPeriods, priceMilliunits: info.commitmentPrice,
            expiresDateMs: info.commitmentExpiresDate)
    }

    /// These fields as a commitment; nil when none is known (how a row of NULLs reads back).
    public static func of(periodNumber: Int64?, totalPeriods: Int64?, priceMilliunits: Int64?, expiresDateMs: Int64?) -> Commitment? {
        guard periodNumber != nil || totalPeriods != nil || priceMilliunits != nil || expiresDateMs != nil else { return nil }
        return Commitment(periodNumber: periodNumber, totalPeriods: totalPeriods, priceMilliunits: priceMilliunits, expiresDateMs: expiresDateMs)
    }

    /// Field by field, `known`'s value where it has one, else `other`'s: the subscription
    /// entries' merge (SQL `coalesce(row, new)`), so two copies of one transaction complete each other.
    public static func merged(_ known: Commitment?, _ other: Commitment?) -> Commitment? {
        guard let known, let other else { return known ?? other }
        return Commitment(
            periodNumber: known.periodNumber ?? other.periodNumber, totalPeriods: known.totalPeriods ?? other.totalPeriods,
            priceMilliunits: known.priceMilliunits ?? other.priceMilliunits, expiresDateMs: known.expiresDateMs ?? other.expiresDateMs)
    }
}

extension SubscriptionSummary {
    /// Where a subscription's commitment stands, from its latest transaction: instalment k of n,
    /// the commitment's price and end, and what is still to come.
    public struct CommitmentStanding: Sendable, Hashable {
        /// Apple's `billingPlanType` of the latest transaction as sent (`MONTHLY`,
        /// `BILLED_UPFRONT`, or a value Apple adds later); nil when Apple said none.
        public var rawBillingPlanType: String?
        /// The instalment the latest transaction paid (k), 1 … `totalPeriods`.
        public var periodNumber: Int64
        /// The commitment's instalments (n).
        public var totalPeriods: Int64
        /// The latest instalment as Apple signed it (its `price`); nil when Apple gave none in an
        /// ISO 4217 currency.
        public var instalment: Money?
        /// What the whole commitment costs (Apple's `commitmentPrice`), in the same currency.
        public var commitmentPrice: Money?
        /// When the commitment ends; milliseconds since 1970, UTC.
        public var expiresAtMs: Int64?

        /// `rawBillingPlanType`, typed; nil when absent or a value this build does not know.
        public var billingPlanType: BillingPlanType? { rawBillingPlanType.flatMap(BillingPlanType.init(rawValue:)) }

        /// The instalments still to be billed after the latest one: n − k, never below 0.
        public var remainingPeriods: Int64 { max(0, totalPeriods - periodNumber) }

        /// The committed value still to come: the instalment × (n − k), in its currency; nothing
        /// for a plan billed up front (paid already). nil when the instalment is unknown.
        public var stillToCome: Money? {
            guard let instalment else { return nil }
            let periods = billingPlanType == .billedUpfront ? 0 : remainingPeriods
            return Money(minorUnits: instalment.minorUnits * periods, currency: instalment.currency)
        }

        /// The standing `entry` states; nil unless Apple numbered its instalment (k and n).
        init?(_ entry: SubscriptionEntry) {
            guard let commitment = entry.commitment, let period = commitment.periodNumber, let total = commitment.totalPeriods else {
                return nil
            }
            rawBillingPlanType = entry.billingPlanType
            periodNumber = period
            totalPeriods = total
            instalment = RevenueProjection.applePrice(entry.priceMilliunits, entry.currency)
            commitmentPrice = RevenueProjection.applePrice(commitment.priceMilliunits, entry.currency)
            expiresAtMs = commitment.expiresDateMs
        }
    }

    /// What this subscription adds to MRR, per month, given its latest paid sale (`latestSale`,
    /// the revenue line's gross) and that sale's paid period (`serviceMs`): nothing in a trial;
    /// for a commitment billed monthly, the latest instalment as Apple signed it (never the
    /// commitment's price over 12, unless the two agree); for any other plan (billed up front, a
    /// billing plan Apple adds later, none) the sale named in calendar months
    /// (`SubscriptionLapses.monthlyMinor`: a yearly plan's price over 12).
    public func monthly(latestSale: Money?, serviceMs: Int64?) -> Money? {
        inTrial ? nil : Self.monthly(commitment: commitment, sale: latestSale, serviceMs: serviceMs)
    }

    /// A paid period's price as a month's worth: the one rule of MRR, for today's snapshot and
    /// for the history (`SubscriptionHistory.monthly`).
    static func monthly(commitment: CommitmentStanding?, sale: Money?, serviceMs: Int64?) -> Money? {
        if let commitment, commitment.billingPlanType == .monthly, let instalment = commitment.instalment {
            return instalment
        }
        guard let sale, let serviceMs, let minor = SubscriptionLapses.monthlyMinor(price: sale.minorUnits, serviceMs: serviceMs) else { return nil }
        return Money(minorUnits: minor, currency: sale.currency)
    }
}
