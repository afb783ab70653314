import AppStore
import Primitives

/// Revenue per transaction (docs/architecture.md §5): one sale line per paid delivery or renewal (not a
/// restore, transfer, trial or Family Sharing access), priced by Apple's signed `price` when it
/// gave one, else by the catalog as it stood when the purchase was made (each load kept from the
/// time it was recorded); one refund line, the sale's negative (or the share Apple refunded:
/// round-half-up(sale × share / 100000)), dated the day of the refund, so a refund never rewrites
/// a closed period. A revocation that moves no money (Family Sharing, an upgrade for which
/// Apple states no amount) makes no line. Apple's commission is applied when reporting
/// (`CommissionPlan`), so changing `LEDGER_COMMISSION` needs no rebuild; the line keeps what the
/// rate depends on.
///
/// Each line keeps its sale's country, the storefront Apple signed (`Storefront.unknown` where
/// Apple never said); for a sale seen only in a receipt, Apple's Get Transaction Info
/// (`TransactionInfoRecorded`) supplies the country, and Apple's price where the catalog's stood
/// in, whichever of the sale and the answer the log holds first.
public struct RevenueProjection: Projection {
    public init() {}
    public let name = "revenue"
    /// 3: the year of paid service resets after a lapse of over 60 days, and leaves out sales
    /// refunded before the sale it rates. 4: each line keeps its quantity (App Store Connect
    /// reports count units). 5: refunds of a share (prorated refunds, upgrades) and their
    /// reversals move that share; Family Sharing revocations move no money. 6: each line keeps
    /// its sale's country and whether Apple priced it; Get Transaction Info's answers are kept.
    /// 7: each line keeps the price point that prices it (Apple's price-point refreshes).
    /// 8: each line keeps the offer that priced its sale (revenue by offer).
    /// 9: each line names its app, and catalog prices are per app (the same product id in two
    /// apps is two products). 10: so are Apple's price points.
    public let version: Int32 = 10
    public let tables = [
        "projection_revenue_catalog_prices", "projection_revenue_lines", "projection_revenue_transaction_info",
        "projection_revenue_app_price_refreshes", "projection_revenue_app_price_points",
    ]

    public func changes(for event: LedgerEvent, at place: EventPlace) -> [ProjectionChange] {
        switch event {
        case .catalogLoaded(let catalog):
            return catalog.products.compactMap { product in
                guard let price = product.priceMinor, let currency = product.currency else { return nil }
                return .setCatalogPrice(
                    bundleId: catalog.bundleId, productId: product.productId, priceMinor: price, currency: currency, effectiveMs: place.recordedAtMs)
            }
        case .purchaseDelivered(let d):
            // A restore or a transfer delivers a purchase paid before, and Family Sharing gives a
            // family member access to what the purchaser paid for: no new money.
            guard !d.isTrial, d.match != .restore, d.match != .transferred, d.familyShared != true,
                  let purchased = d.purchaseDateMs else { return [] }
            return [.addRevenueSale(RevenueSale(
                transactionId: d.transactionId, originalTransactionId: d.originalTransactionId, productId: d.productId, kind: d.kind,
                userId: d.userId, environment: d.environment, purchaseDateMs: purchased,
                serviceMs: d.expiresDateMs.map { $0 - purchased }, quantity: d.quantity,
                applePrice: Self.applePrice(d.priceMilliunits, d.currency), country: Storefront.countryCode(d.storefront),
                offerId: d.offerIdentifier, bundleId: d.bundleId))]
        case .subscriptionRenewalSeen(let r):
            guard !r.isTrial, r.familyShared != true, let purchased = r.purchaseDateMs else { return [] }
            return [.addRevenueSale(RevenueSale(
                transactionId: r.transactionId, originalTransactionId: r.originalTransactionId, productId: r.productId,
                kind: .autoRenewable, userId: r.userId, environment: r.environment, purchaseDateMs: purchased,
                serviceMs: r.expiresDateMs.map { $0 - purchased }, quantity: 1,
                applePrice: Self.applePrice(r.priceMilliunits, r.currency), country: Storefront.countryCode(r.storefront),
                bundleId: r.bundleId))]
        case .purchaseRefunded(let r):
            guard r.fractionMilli > 0 else { return [] }
            return [.addRevenueRefund(transactionId: r.transactionId, atMs: r.refundedAtMs, fractionMilli: r.fractionMilli)]
        case .refundReversed(let v):
            // Gives back exactly what the refund took.
            guard v.refund.fractionMilli > 0 else { return [] }
            return [.addRevenueReversal(transactionId: v.refund.transactionId, atMs: v.reversedAtMs, fractionMilli: v.refund.fractionMilli)]
        case .pricePointsRefreshed(let r):
            return [.setPricePoints(bundleId: r.bundleId ?? "", productId: r.productId, refreshedAtMs: r.refreshedAtMs, points: r.points.filter {
                $0.customerPriceMinor != nil && $0.proceedsMinor != nil && Storefront.countryCode($0.territory) != nil && ISO4217.isCode($0.currency)
            })]
        case .transactionInfoRecorded(let i):
            // Checked again, as the sales' are: only a country code and ISO 4217 money count.
            let country = Storefront.countryCode(i.storefront)
            let price = Self.applePrice(i.priceMilliunits, i.currency)
            guard country != nil || price != nil else { return [] }
            return [.setRevenueTransactionInfo(transactionId: i.transactionId, country: country, applePrice: price)]
        default:
            return []
        }
    }

    /// Apple's signed `price` is already the whole transaction's, "the total amount of the
    /// transaction for the quantity the customer purchased" (App Store Server API, `price`);
    /// only the catalog's unit price is multiplied by the quantity.
    static func applePrice(_ milliunits: Int64?, _ currency: String?) -> Money? {
        // Checked again here: events recorded before currencies were checked on the way in
        // never become money on replay unless their currency is ISO 4217.
        guard let milliunits, let currency, ISO4217.isCode(currency) else { return nil }
        return Money.fromMilliunits(milliunits, currency: currency)
    }
}

/// A paid transaction, as a revenue line.
public struct RevenueSale: Sendable, Hashable {
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    public var kind: ProductKind
    public var userId: String
    public var environment: String
    public var purchaseDateMs: Int64
    /// The paid period (expiry minus purchase) of a subscription transaction, which counts
    /// toward the subscription's year of paid service.
    public var serviceMs: Int64?
    public var quantity: Int64
    /// Apple's price for the whole transaction, when its answer carried one.
    public var applePrice: Money?
    /// The storefront's country (ISO 3166-1 alpha-3, `Storefront.countryCode`), when Apple
    /// signed one; the line says `Storefront.unknown` otherwise, until Get Transaction Info does.
    public var country: String? = nil
    /// The offer that priced it (Apple's `offerIdentifier`), for revenue by offer.
    public var offerId: String? = nil
    /// The app it was sold in; nil when its event was recorded before several apps (the runner
    /// writes the log's legacy app).
    public var bundleId: String? = nil

    /// The UTC day of the sale, `YYYY-MM-DD`.
    public var day: String { RevenueDay.of(purchaseDateMs) }
}

/// Apple's commission on a sale (docs/configuration.md `LEDGER_COMMISSION`).
public enum CommissionPlan: String, Sendable, Hashable, CaseIterable {
    /// 30%, and 15% for a subscription once its subscriber has a year of paid service:
    /// counted over the subscription's sales before the one rated, leaving out those refunded
    /// before it, and restarted after a lapse of more than 60 days.
    case standard
    /// 15% throughout (App Store Small Business Program).
    case smallBusiness = "small_business"

    /// A year of paid service, after which a subscription's rate drops to 15%.
    public static let yearOfServiceMs: Int64 = 365 * 86_400_000
    /// A subscriber who comes back more than 60 days after their last paid day starts their
    /// days of paid service over; within 60 days they resume where they stopped (Apple,
    /// "Auto-renewable subscriptions": days of paid service).
    public static let lapseResetMs: Int64 = 60 * 86_400_000

    /// The commission in percent on a line; `reducedRate` says the subscription had a year
    /// of paid service before this sale.
    public func percent(reducedRate: Bool) -> Int64 {
        switch self {
        case .smallBusiness: 15
        case .standard: reducedRate ? 15 : 30
        }
    }

    /// The commission on `gross` minor units, rounded half away from zero, integer arithmetic
    /// only; a refund's (negative gross) is the exact opposite of its sale's.
    public func commission(onMinor gross: Int64, reducedRate: Bool) -> Int64 {
        let magnitude = (abs(gross) * percent(reducedRate: reducedRate) + 50) / 100
        return gross < 0 ? -magnitude : magnitude
    }
}

/// Calendar days in UTC without Foundation's calendars, so the pure module computes the same
/// day on every machine, and quickly: timeline reads format a time for every event they show,
/// and a formatter per call would cost more than their queries (docs/benchmarks.md, 'Why the code is
/// shaped so').
public enum RevenueDay {
    /// `YYYY-MM-DD` (UTC) of an instant in milliseconds since 1970.
    public static func of(_ milliseconds: Int64) -> String {
        let (year, month, day) = UTCDays.civil(days: UTCDays.day(ofMilliseconds: milliseconds).days)
        return "\(year)-\(two(month))-\(two(day))"
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC, ISO 8601) of an instant in milliseconds since 1970.
    public static func iso8601(_ milliseconds: Int64) -> String {
        let inDay = UTCDays.day(ofMilliseconds: milliseconds).millisecondOfDay
        let (seconds, millis) = (inDay / 1_000, inDay % 1_000)
        let millisText = millis < 10 ? "00\(millis)" : (millis < 100 ? "0\(millis)" : "\(millis)")
        return of(milliseconds) + "T\(two(seconds / 3_600)):\(two(seconds / 60 % 60)):\(two(seconds % 60)).\(millisText)Z"
    }

    private static func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
}
