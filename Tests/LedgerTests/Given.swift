import Foundation

@testable import Ledger

/// The world the domain tests start from: one app, its catalog, two users, and builders for what
/// the ledger recorded before (`PurchaseContext`) and what Apple answered (`Evidence`).
/// Tests read given (context, evidence) → when (`PurchaseDecider.decide`) → then (the decision).
enum Given {
    static let bundleId = "com.example.app"
    static let coins = "com.example.coins100"
    static let removeAds = "com.example.removeads"
    static let monthly = "com.example.pro.monthly"
    static let yearly = "com.example.pro.yearly"

    static let alice = "user-alice"
    static let bob = "user-bob"
    /// The id of the submission being decided, unless a test says otherwise.
    static let submissionId = "sub-1"

    /// 2023-11-14 22:13:20 UTC in milliseconds: orders are created around it.
    static let t0: Int64 = 1_700_000_000_000
    static let minute: Int64 = 60_000
    static let day: Int64 = 86_400_000

    /// A consumable granting 100 coins, a non-consumable, and two auto-renewable subscriptions.
    static let catalog = Catalog(products: [
        Product(productId: coins, kind: .consumable, grants: ["coins": 100], priceMinor: 99, currency: "USD"),
        Product(productId: removeAds, kind: .nonConsumable, priceMinor: 299, currency: "USD"),
        Product(productId: monthly, kind: .autoRenewable, priceMinor: 499, currency: "USD"),
        Product(productId: yearly, kind: .autoRenewable, priceMinor: 4999, currency: "USD"),
    ])

    /// What the ledger recorded before, for the app `com.example.app`.
    static func context(
        transferPolicy: TransferPolicy = .keep, transactions: [TransactionRecord] = [], refunded: Set<String> = [],
        owners: [String: Ownership] = [:], openOrders: [OrderCreated] = [], ordersByToken: [OrderCreated] = [],
        catalog: Catalog = Given.catalog
    ) -> PurchaseContext {
        PurchaseContext(
            catalog: catalog, bundleId: bundleId, transferPolicy: transferPolicy,
            transactions: Dictionary(transactions.map { ($0.transactionId, $0) }, uniquingKeysWith: { _, last in last }),
            refunded: refunded, owners: owners, openOrders: openOrders,
            ordersByToken: Dictionary(ordersByToken.map { ($0.appAccountToken, $0) }, uniquingKeysWith: { _, last in last }))
    }

    /// Apple's answer: the app's bundle id and Production unless told otherwise.
    static func evidence(
        _ entries: EvidenceEntry..., bundleId: String? = Given.bundleId, environment: String = "Production",
        renewals: [String: RenewalObservation] = [:]
    ) -> Evidence {
        Evidence(bundleId: bundleId, environment: environment, entries: entries, renewals: renewals)
    }

    /// One transaction as Apple lists it; its own original unless `original` says otherwise,
    /// bought a minute after `t0`, listed in `in_app`.
    static func entry(
        _ transactionId: String, _ productId: String, original: String? = nil, quantity: Int64 = 1,
        purchasedAt: Int64? = Given.t0 + Given.minute, expiresAt: Int64? = nil, cancelledAt: Int64? = nil,
        cancellationReason: Int? = nil, isRevocation: Bool = false, isTrial: Bool = false, isUpgraded: Bool = false,
        token: String? = nil, inApp: Bool = true, revocationType: String? = nil, revocationPercentage: Int64? = nil
    ) -> EvidenceEntry {
        EvidenceEntry(
            transactionId: transactionId, originalTransactionId: original ?? transactionId, productId: productId,
            quantity: quantity, purchaseDateMs: purchasedAt, expiresDateMs: expiresAt, cancellationDateMs: cancelledAt,
            cancellationReason: cancellationReason, isRevocation: isRevocation, isTrial: isTrial, isUpgraded: isUpgraded,
            appAccountToken: token, inApp: inApp, rawRevocationType: revocationType, revocationPercentage: revocationPercentage)
    }

    /// An order Alice created at `t0` for one pack of coins, unless told otherwise.
    static func order(
        _ orderId: String, user: String = Given.alice, product: String = Given.coins, quantity: Int64 = 1,
        createdAt: Int64 = Given.t0, token: String? = nil
    ) -> OrderCreated {
        OrderCreated(
            orderId: orderId, userId: user, productId: product, quantity: quantity,
            appAccountToken: token ?? "00000000-0000-4000-8000-\(orderId)", createdAtMs: createdAt)
    }

    /// The submission being decided.
    static func submission(
        by user: String = Given.alice, transaction: String? = nil, order: String? = nil, id: String = Given.submissionId
    ) -> Submission {
        Submission(submissionId: id, userId: user, orderId: order, transactionId: transaction)
    }

    /// A delivery recorded by an earlier submission (`sub-0`), granting what the catalog says.
    static func delivered(
        _ transactionId: String, _ productId: String, to user: String, original: String? = nil, quantity: Int64 = 1,
        kind: ProductKind? = nil, orderId: String? = nil, purchasedAt: Int64? = Given.t0 + Given.minute,
        expiresAt: Int64? = nil, match: MatchReason = .noOrder
    ) -> PurchaseDelivered {
        let product = catalog[productId]
        return PurchaseDelivered(
            transactionId: transactionId, originalTransactionId: original ?? transactionId, productId: productId,
            kind: kind ?? product?.kind ?? .consumable, quantity: quantity, userId: user, orderId: orderId,
            environment: "Production", purchaseDateMs: purchasedAt, expiresDateMs: expiresAt, priceMilliunits: nil,
            currency: nil, appAccountToken: nil, appTransactionId: nil, isTrial: false,
            grants: (product?.grants ?? [:]).mapValues { $0 * quantity }, submissionId: "sub-0", match: match)
    }

    /// A renewal recorded earlier (`sub-0`) for the owner of `original`.
    static func renewal(
        _ transactionId: String, of original: String, _ productId: String = Given.monthly, to user: String,
        purchasedAt: Int64? = nil, expiresAt: Int64? = nil
    ) -> SubscriptionRenewalSeen {
        SubscriptionRenewalSeen(
            transactionId: transactionId, originalTransactionId: original, productId: productId, userId: user,
            environment: "Production", purchaseDateMs: purchasedAt, expiresDateMs: expiresAt, isTrial: false,
            priceMilliunits: nil, currency: nil, source: "sub-0")
    }
}
