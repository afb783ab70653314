import AppStore
import Ledger
import Primitives

/// One line for people per event, in the words a support agent would paste into a reply.
enum TimelineSummary {
    static func line(for event: LedgerEvent, actor: String?) -> String {
        let by = actor.map { " (by \($0))" } ?? ""
        switch event {
        case .catalogLoaded(let c):
            return "Catalog loaded: \(c.products.count) products\(by)"
        case .appsConfigured(let a):
            let legacy = a.legacyBundleId.map { "; the events recorded before name no app and belong to \($0)" } ?? ""
            return "Apps served: \(a.apps.map(\.bundleId).joined(separator: ", "))\(legacy)\(by)"
        case .erasureBegan:
            return "People are sealed from here on, so they can be erased\(by)"
        case .userErased(let e):
            return "User erased: subject \(e.subject), \(e.reason)\(by)"
        case .orderCreated(let o):
            return "Order \(o.orderId) created for user \(o.userId): \(o.quantity) × \(o.productId)\(by)"
        case .orderFulfilled(let f):
            return "Order \(f.orderId) fulfilled by Apple transaction \(f.transactionId)"
        case .receiptSubmitted(let s):
            let what = switch s.kind {
            case .receipt: "an App Store receipt"
            case .signedTransaction: "a StoreKit 2 signed transaction"
            case .imported: "an imported history line"
            case .restore: "a restore through Apple"
            }
            let claim = s.transactionId.map { $0.isEmpty ? "" : " for transaction \($0)" } ?? ""
            return "User \(s.userId) submitted \(what)\(claim) (document sha256 \(s.documentSha256.prefix(12))…)\(by)"
        case .appleResponded(let r):
            let answer = r.status.map { "status \($0)" } ?? (r.failure.map { "no answer (\($0))" } ?? "HTTP \(r.httpStatus.map(String.init) ?? "?")")
            return "Apple's \(r.endpoint) verifyReceipt answered \(answer) in \(r.latencyMs) ms"
        case .verificationPending(let p):
            return "Apple could not answer (\(p.reason)); kept, attempt \(p.attempt), retried automatically"
        case .deliveryRejected(let r):
            return "Rejected for user \(r.userId): \(r.code.rawValue): \(r.message)"
        case .submissionResolved(let r):
            let list = r.transactionIds.joined(separator: ", ")
            return r.outcome == "delivered" ? "Answered delivered: \(list)" : "Answered already delivered (a resubmission): \(list)"
        case .appleAccountObserved(let a):
            return "The receipt lists \(a.originalTransactionIds.count) purchases of one Apple account (\(a.environment))"
        case .purchaseDelivered(let d):
            let grants = d.grants.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            let purchased = d.purchaseDateMs.map { ", purchased \(RevenueDay.iso8601($0))" } ?? ""
            let expires = d.expiresDateMs.map { ", expires \(RevenueDay.iso8601($0))" } ?? ""
            return "Delivered \(d.quantity) × \(d.productId) to user \(d.userId)\(grants.isEmpty ? "" : " (\(grants))"): transaction \(d.transactionId)"
                + " (original \(d.originalTransactionId))\(Self.storefront(d.storefront)), \(d.environment)\(purchased)\(expires)"
                + "\(Self.commitment(d.billingPlanType, d.commitment))\(d.offerIdentifier.map { ", redeeming offer \($0)" } ?? "")\(d.offerSignatureId.map { " (signature \($0))" } ?? ""), matched by \(d.match.rawValue)"
        case .subscriptionRenewalSeen(let r):
            let expires = r.expiresDateMs.map { " until \(RevenueDay.iso8601($0))" } ?? ""
            return "Subscription \(r.originalTransactionId) renewed: transaction \(r.transactionId)\(Self.storefront(r.storefront))\(expires)"
                + "\(Self.commitment(r.billingPlanType, r.commitment)) (seen in \(r.source))"
        case .transactionInfoRecorded(let i):
            let sold = Storefront.countryCode(i.storefront).map { "sold in \($0)" } ?? "Apple named no storefront"
            let price = i.priceMilliunits.flatMap { milliunits in
                i.currency.flatMap { ISO4217.isCode($0) ? " for \(Money.fromMilliunits(milliunits, currency: $0).decimal) \($0)" : nil }
            } ?? ""
            return "Apple's Get Transaction Info (\(i.environment)) on transaction \(i.transactionId) (original \(i.originalTransactionId)): "
                + "\(sold)\(price) (document sha256 \(i.documentSha256.prefix(12))…)"
        case .subscriptionObserved(let o):
            return "Subscription \(o.originalTransactionId) state seen: \(o.entries.count) transactions (\(o.source))"
        case .ownershipClaimed(let c):
            return "User \(c.userId) owns \(c.productId) (original transaction \(c.originalTransactionId))"
        case .ownershipTransferred(let t):
            return "\(t.productId) (original transaction \(t.originalTransactionId)) moved from user \(t.fromUserId) to user \(t.toUserId)"
        case .appleNotificationReceived(let n):
            let subtype = n.subtype.map { "/\($0)" } ?? ""
            // Some notifications concern no transaction (a TEST, a consent rescinded, an external
            // purchase token, a renewal-extension summary): say so rather than "transaction ?".
            let about = (n.transactionId ?? n.originalTransactionId).map { " about transaction \($0)" } ?? ", about no transaction"
            return "Apple sent notification \(n.notificationType)\(subtype) (\(n.version))\(about)"
        case .purchaseRefunded(let r):
            return refundLine(r)
        case .balanceSpent(let s):
            let from = s.attributions.map { "\($0.amount) of transaction \($0.transactionId)" }.joined(separator: ", ")
            let why = s.reason.map { " for \($0)" } ?? ""
            return "User \(s.userId) spent \(s.amount) \(s.unit)\(why) (spend \(s.spendId)), balance \(s.balanceAfter)\(from.isEmpty ? "" : ": \(from)")\(by)"
        case .consumptionConsentRecorded(let c):
            return "User \(c.userId) \(c.consumptionData ? "agreed" : "did not agree") that consumption data may be sent to Apple\(by)"
        case .consumptionInformationSent(let c):
            let used = c.consumptionPercentage.map { ", \(Double($0) / 1000)% consumed" } ?? ""
            let preference = c.refundPreference.map { ", refund preference \($0)" } ?? ""
            return "Told Apple about refund request \(c.notificationId) for transaction \(c.transactionId): \(c.deliveryStatus)\(used)\(preference), sample content \(c.sampleContentProvided ? "provided" : "not provided"); Apple answered HTTP \(c.httpStatus)"
        case .consumptionInformationWithheld(let c):
            return "Did not answer Apple's refund request \(c.notificationId) about transaction \(c.transactionId ?? "?"): \(c.reason)"
        case .appleOrderLookedUp(let o):
            return "Apple's order \(o.orderId) (\(o.environment)) holds transactions \(o.transactionIds.joined(separator: ", "))\(by)"
        case .transactionHistoryRead(let h):
            return "Read Apple's transaction history (\(h.environment)) from transaction \(h.transactionId): \(h.transactionCount) transactions, each signature verified"
        case .refundReversed(let v):
            let r = v.refund
            let share = r.fractionMilli < RefundFraction.whole ? " \(RefundFraction.percentText(r.fractionMilli))" : ""
            let given = r.grantsTakenBack.map { amounts in amounts.isEmpty ? "" : " (\(Self.units(amounts)) given back)" } ?? ""
            return "Apple reversed the\(share) refund of transaction \(r.transactionId) on \(RevenueDay.iso8601(v.reversedAtMs)): user \(r.userId) has it again\(given)"
        case .reconciliationCompleted(let r):
            return "Reconciled \(r.environment) notifications \(RevenueDay.iso8601(r.fromMs)) – \(RevenueDay.iso8601(r.toMs)): \(r.notificationsRecorded) of \(r.notificationsSeen) were missing"
        case .appStoreReportImported(let r):
            return "Imported App Store Connect's \(r.kind) report for \(r.periodStart) – \(r.periodEnd) (\(r.lines.count) in-app purchase lines)\(by)"
        case .pricePointsRefreshed(let p):
            return "Read Apple's price points of \(p.productId) (Apple id \(p.appleId)): \(p.points.count) in \(Set(p.points.map(\.territory)).count) territories"
        case .subscriptionRenewalExtended(let e):
            let why = e.note.map { ", \"\($0)\"" } ?? ""
            let asked = "Asked Apple to extend subscription \(e.originalTransactionId) by \(e.days) days (\(e.reason.rawValue)\(why), request \(e.requestId))"
            if e.extended {
                return asked + ": extended to \(e.effectiveDateMs.map(RevenueDay.iso8601) ?? "?")\(by)"
            }
            return asked + ": Apple refused (\(e.appleErrorCode.map(String.init) ?? "?") \(e.appleErrorMessage ?? ""))\(by)"
        case .appAccountTokenSet(let a):
            let why = a.reason.map { " because \"\($0)\"" } ?? ""
            if a.outcome == "set" {
                let moved = a.previousUserId.map { $0 == a.userId ? "" : " (it was \($0)'s)" } ?? ""
                return "Attached app account token \(a.appAccountToken) of user \(a.userId) to \(a.originalTransactionId) with Apple\(moved)\(why)\(by)"
            }
            return "Refused to attach user \(a.userId)'s app account token to \(a.originalTransactionId): \(a.refusal ?? "refused")\(why)\(by)"
        case .transactionFinished(let f):
            return f.outcome == "finished"
                ? "Finished transaction \(f.transactionId) with Apple (\(f.environment)), so no device keeps it open"
                : "Apple refused to finish transaction \(f.transactionId) (error \(f.appleErrorCode.map(String.init) ?? "?"))"
        case .offerSignatureIssued(let o):
            let what = switch o.kind {
            case .promotional: "a promotional offer (StoreKit 2 JWS)"
            case .promotionalLegacy: "a promotional offer (legacy signature)"
            case .introductoryEligibility: "introductory-offer eligibility (\(o.allowIntroductoryOffer == true ? "allowed" : "not allowed"))"
            }
            let offer = o.offerId.map { " offer \($0)" } ?? ""
            let until = o.expiresAtMs.map { ", valid until \(RevenueDay.iso8601($0))" } ?? ""
            return "Signed \(what) for user \(o.userId): \(o.productId)\(offer), nonce \(o.nonce), key \(o.keyId)\(until) (signature \(o.signatureId))\(by)"
        case .massRenewalExtensionRequested(let m):
            let where_ = m.storefronts.map { " in \($0.joined(separator: ", "))" } ?? ""
            return "Asked Apple to extend every active subscription of \(m.productId)\(where_) by \(m.days) days (\(m.reason.rawValue), request \(m.requestId))\(by)"
        case .massRenewalExtensionCompleted(let m):
            if m.refused {
                return "Apple refused mass extension \(m.requestId) of \(m.productId): error \(m.appleErrorCode ?? 0)\(m.appleErrorMessage.map { ": \($0)" } ?? "")"
            }
            return "Apple completed mass extension \(m.requestId) of \(m.productId): \(m.succeededCount) extended, \(m.failedCount) not"
        case .purchaseUnclaimed(let u):
            return "Apple's history shows \(u.productId) bought (transaction \(u.transactionId)) and the ledger had no record of it; no user to deliver it to: waiting for the first who submits it"
        case .unknown(let type):
            return "\(type) (recorded by a newer version)"
        }
    }

    /// A refund, a Family Sharing revocation or an upgrade, with the share of the money it moved
    /// ("refunded 25%") and the units it took back when less than all.
    static func refundLine(_ r: PurchaseRefunded) -> String {
        let reason = r.reason.map { $0 == 1 ? ", reason: an issue in the app" : ", reason: other" } ?? ""
        let on = RevenueDay.iso8601(r.refundedAtMs)
        let transaction = "transaction \(r.transactionId) of user \(r.userId)"
        let taken = r.grantsTakenBack.map { amounts in amounts.isEmpty ? "" : " (\(Self.units(amounts)) taken back)" } ?? ""
        if !r.endsAccess {
            let money = r.fractionMilli > 0
                ? "Apple refunded \(RefundFraction.percentText(r.fractionMilli)) of it"
                : "Apple gave no refund amount, so no money moved"
            return "Upgraded on \(on): \(transaction) ended early for a higher plan, which goes on; \(money)\(reason)"
        }
        let what = r.revocation == "revoke" ? "Revoked (Family Sharing)" : "Refunded by Apple"
        let share = switch r.fractionMilli {
        case RefundFraction.whole: ""
        case 0: ", no money moved"
        default: ", refunded \(RefundFraction.percentText(r.fractionMilli))\(taken)"
        }
        return "\(what) on \(on): \(transaction)\(share)\(reason)"
    }

    /// " in USA" for a recorded storefront, nothing without one.
    private static func storefront(_ storefront: String?) -> String {
        Storefront.countryCode(storefront).map { " in \($0)" } ?? ""
    }

    /// ", instalment 3 of 12 of a commitment (MONTHLY)" for a transaction billed against a
    /// commitment, ", billing plan BILLED_UPFRONT" for a plan alone, nothing without either.
    private static func commitment(_ plan: String?, _ commitment: Commitment?) -> String {
        guard let commitment else { return plan.map { ", billing plan \($0)" } ?? "" }
        let number = commitment.periodNumber.map(String.init) ?? "?", total = commitment.totalPeriods.map(String.init) ?? "?"
        return ", instalment \(number) of \(total) of a commitment" + (plan.map { " (\($0))" } ?? "")
    }

    /// `{"coins": 34}` as "34 coins", units in order.
    private static func units(_ amounts: [String: Int64]) -> String {
        amounts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
    }
}
