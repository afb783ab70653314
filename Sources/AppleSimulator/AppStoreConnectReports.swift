/// App Store Connect's downloadable reports, written from the simulator's own Production
/// transactions (never Sandbox, as Apple's reports have none), so the ledger's reconciliation
/// can be tested against something that looks like Apple's files.
///
/// A purchase or renewal counts on its purchase day, a refund (not an upgrade, not a Family
/// Sharing revocation) as negative units on its refund day, in Pacific time. Free trials (price
/// 0) are left out, as they carry no money. The simulator's storefront is the United States
/// (`SignedTransactionPayload` says "USA"), so every row's country is "US". Not modelled: the
/// prorated credit of an upgrade, taxes, exchange rates, and a reversed refund's history (after
/// a reversal the transaction reads as never refunded, so no report shows the refund).
extension AppleSimulator {
    /// The Sales and Trends summary sales report (`SALES`, `SUMMARY`, `DAILY`) for one Pacific
    /// day, "YYYY-MM-DD", as tab-separated text with Apple's 28 columns.
    public func salesSummaryReport(day: String) throws -> String {
        let pacificDay = try ReportFormat.day(day)
        let entries = core.withLock { $0.state.reportEntries(from: pacificDay.startMs, to: pacificDay.endMs) }
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
        let entries = core.withLock { $0.state.reportEntries(from: first.startMs, to: last.endMs) }
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
    /// Price of one unit in milliunits of `currency`.
    var unitPriceMilliunits: Int64
    var currency: String
    var isRenewal: Bool
    /// The app's bundle id, the in-app purchase's `Parent Identifier`.
    var bundleId: String
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
}

extension SimulatorState {
    /// Sales and refunds of Production transactions in [`startMs`, `endMs`), in no order.
    func reportEntries(from startMs: Int64, to endMs: Int64) -> [ReportEntry] {
        func inPeriod(_ ms: Int64) -> Bool { startMs <= ms && ms < endMs }
        var entries: [ReportEntry] = []
        for transaction in transactions.values
        where transaction.environment == .production && transaction.priceMilliunits > 0 {
            guard let product = products[transaction.productId] else { continue }
            // The transaction's price is the quantity's total (JWS `price`).
            let quantity = Int64(max(transaction.quantity, 1))
            let entry = ReportEntry(
                timeMs: transaction.purchaseDateMs, product: product, units: quantity,
                unitPriceMilliunits: transaction.priceMilliunits / quantity, currency: transaction.currency,
                isRenewal: transaction.transactionReason == "RENEWAL", bundleId: transaction.bundleId, country: "US")
            if inPeriod(transaction.purchaseDateMs) { entries.append(entry) }
            // A refund, not an upgrade (isRefunded) nor a Family Sharing revocation: a family
            // member losing access returns no money.
            if transaction.isRefunded, transaction.revocationType != "FAMILY_REVOKE",
                let refundedMs = transaction.cancellationDateMs, inPeriod(refundedMs)
            {
                var refund = entry
                refund.timeMs = refundedMs
                refund.units = -quantity
                entries.append(refund)
            }
        }
        return entries
    }
}
