/// App Store Connect's downloadable reports, written from the simulator's own Production
/// transactions (never Sandbox, as Apple's reports have none), so the ledger's reconciliation
/// can be tested against something that looks like Apple's files.
///
/// A purchase or renewal counts on its purchase day, a refund (not an upgrade, not a Family
/// Sharing revocation) as negative units on its refund day, in Pacific time. Free trials (price
/// 0) are left out, as they carry no money. Each row's country is the ISO 3166-1 alpha-2 code of
/// the transaction's storefront (`SimulatedStorefront.reportCountry(of:)`: "DE" for DEU; "US"
/// for a storefront the simulator has no code for); its price and currency are those the
/// transaction was charged, in its storefront's currency (`PriceTerritory.equivalentPrice`), and
/// its proceeds those of the simulator's own price points: net of the territory's tax in force
/// on the purchase date, less Apple's commission (`PricePoints.proceeds(of:unitPrice:taxChanges:)`).
/// Proceeds are paid in the customer's currency. A prorated refund (`REFUND_PRORATED`) returns
/// its share of the unit price and of the proceeds (`ReportEntry.share`).
///
/// Not modelled: the prorated credit of an upgrade, exchange rates (proceeds are never
/// converted to the developer's currency), lapses that restart a subscriber's year, and a
/// reversed refund's history (after a reversal the transaction reads as never refunded, so no
/// report shows the refund).
extension AppleSimulator {
    /// The Sales and Trends summary sales report (`SALES`, `SUMMARY`, `DAILY`) for one Pacific
    /// day, "YYYY-MM-DD", as tab-separated text with Apple's 28 columns.
    public func salesSummaryReport(day: String) throws -> String {
        let pacificDay = try ReportFormat.day(day)
        let taxChanges = configuration.taxChanges
        let primaryApp = configuration.bundleId
        let entries = core.withLock {
            $0.state.reportEntries(from: pacificDay.startMs, to: pacificDay.endMs, taxChanges: taxChanges, primaryApp: primaryApp)
        }
        return SalesSummaryReport.text(entries, day: pacificDay)
    }

    /// The financial detail report ("All Countries or Regions (Detailed)") for the Pacific days
    /// `from` through `to` ("YYYY-MM-DD", inclusive), standing in for one Apple fiscal month.
    public func financialReport(from: String, to: String) throws -> String {
        let first = try ReportFormat.day(from)
        let last = try ReportFormat.day(to)
        guard first.startMs <= last.startMs else {
            throw SimulatorError(.invalidRequest, "the report's first day \(from) is after its last, \(to)")
        }
        let taxChanges = configuration.taxChanges
        let primaryApp = configuration.bundleId
        let entries = core.withLock {
            $0.state.reportEntries(from: first.startMs, to: last.endMs, taxChanges: taxChanges, primaryApp: primaryApp)
        }
        return FinancialDetailReport.text(entries, from: first, to: last)
    }
}

/// One priced movement of units a report counts: a sale on its purchase day, or a refund
/// (negative units) on its refund day.
struct ReportEntry: Sendable, Hashable {
    var timeMs: Int64
    var product: SimulatedProduct
    /// Positive for a sale, negative for a refund.
    var units: Int64
    /// Price of one unit in minor units of `currency`, positive for a refund too (the reports
    /// write a return's price negative); a prorated refund's share of it.
    var unitPriceMinor: Int64
    /// The developer's proceeds for one unit in minor units of `currency` (the customer's, as
    /// Apple pays proceeds in the sale's currency), positive for a refund too; a prorated
    /// refund's share of them.
    var proceedsMinor: Int64
    var currency: String
    var isRenewal: Bool
    /// The app's bundle id, the in-app purchase's `Parent Identifier`.
    var bundleId: String
    /// The product's Apple ID in that app (`SimulatedProduct.reportAppleIdentifier(inApp:primaryApp:)`).
    var appleIdentifier: String
    /// ISO 3166-1 alpha-2, as the reports name countries ("DE").
    var country: String

    var isReturn: Bool { units < 0 }

    /// Apple's Product Type Identifier for the product: IA1 consumable and non-consumable,
    /// IAY auto-renewable, IA9 non-renewing subscription (iOS; the -M variants are Mac).
    var productType: String {
        switch product.kind {
        case .consumable, .nonConsumable: "IA1"
        case .autoRenewable: "IAY"
        case .nonRenewing: "IA9"
        }
    }

    /// `percentage` thousandths of a percent (25000 is 25 %) of `minor` units, rounded half up:
    /// round-half-up(minor × percentage / 100000), the share a prorated refund returns.
    static func share(_ minor: Int64, percentage: Int64) -> Int64 {
        (minor * percentage + 50_000) / 100_000
    }
}

extension SimulatorState {
    /// Sales and refunds of Production transactions in [`startMs`, `endMs`), in no order, their
    /// proceeds at the tax rates `taxChanges` set (`Configuration.taxChanges`).
    /// `primaryApp`: the simulator's own app, whose products keep their configured Apple IDs.
    func reportEntries(from startMs: Int64, to endMs: Int64, taxChanges: [TaxChange], primaryApp: String) -> [ReportEntry] {
        func inPeriod(_ ms: Int64) -> Bool { startMs <= ms && ms < endMs }
        var entries: [ReportEntry] = []
        for transaction in transactions.values
        where transaction.environment == .production && transaction.priceMilliunits > 0 {
            guard let product = products[transaction.productId] else { continue }
            // The transaction's price is the quantity's total (JWS `price`).
            let quantity = Int64(max(transaction.quantity, 1))
            let unitPrice = ReportFormat.minorUnits(
                milliunits: transaction.priceMilliunits / quantity, currency: transaction.currency)
            let entry = ReportEntry(
                timeMs: transaction.purchaseDateMs, product: product, units: quantity, unitPriceMinor: unitPrice,
                proceedsMinor: PricePoints.proceeds(of: transaction, unitPrice: unitPrice, taxChanges: taxChanges),
                currency: transaction.currency, isRenewal: transaction.transactionReason == "RENEWAL",
                bundleId: transaction.bundleId,
                appleIdentifier: product.reportAppleIdentifier(inApp: transaction.bundleId, primaryApp: primaryApp),
                country: SimulatedStorefront.reportCountry(of: transaction.storefront))
            if inPeriod(transaction.purchaseDateMs) { entries.append(entry) }
            // A refund, not an upgrade (isRefunded) nor a Family Sharing revocation: a family
            // member losing access returns no money.
            if transaction.isRefunded, transaction.revocationType != "FAMILY_REVOKE",
                let refundedMs = transaction.cancellationDateMs, inPeriod(refundedMs)
            {
                var refund = entry
                refund.timeMs = refundedMs
                refund.units = -quantity
                // A prorated refund returns its share of each unit's price and proceeds.
                if let percentage = transaction.revocationPercentage {
                    refund.unitPriceMinor = ReportEntry.share(entry.unitPriceMinor, percentage: percentage)
                    refund.proceedsMinor = ReportEntry.share(entry.proceedsMinor, percentage: percentage)
                }
                entries.append(refund)
            }
        }
        return entries
    }
}
