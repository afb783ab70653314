import Sealing

/// Dispute timelines (docs/architecture.md §5): which events concern each transaction, order, user and
/// submission, and which subjects include another's (an order includes the transaction it was
/// fulfilled by, which includes the submissions that delivered or claimed it). A timeline is
/// the events of its subject and of every subject it includes, in log order.
public struct TimelineProjection: Projection {
    public init() {}
    public let name = "timelines"
    /// 2: offer signatures, and the purchases that redeem them linked to them.
    /// 3: mass renewal extensions, and the subscriptions Apple told about them linked to them.
    /// 4: a purchase links to the one offer signature that allowed it, when the ledger knows it.
    public let version: Int32 = 4
    public let tables = ["projection_timeline_events", "projection_timeline_links"]
    /// Both are sets of (subject, position) and (subject, includes), and hold most of a
    /// rebuild's rows: keeping their index entries up row by row costs much of its time in
    /// PostgreSQL, so a replay fills them without keys and builds each key once at the end
    /// (docs/benchmarks.md, 'Why the code is shaped so').
    public var setTables: [String] { tables }

    /// Subject names: `transaction:ID`, `order:ID`, `user:ID`, `submission:ID`.
    public enum Subject {
        public static func transaction(_ id: String) -> String { "transaction:" + id }
        public static func order(_ id: String) -> String { "order:" + id }
        /// `user:ID` for an id recorded in clear (before erasure came); `person:SUBJECT` for a
        /// sealed one. A person's handle is some 80 characters, and it keyed a row of both
        /// timeline tables for nearly every event of theirs: their subject (27) names them as
        /// well, one handle per subject, and made the rebuild's rows and keys that much lighter
        /// (docs/benchmarks.md, 2026-11-29, night).
        public static func user(_ id: String) -> String {
            if let subject = Handle.subjectName(of: id) { return "person:" + subject }
            return "user:" + id
        }
        public static func submission(_ id: String) -> String { "submission:" + id }
        /// One offer signature: the purchase it allowed includes it.
        public static func offerSignature(_ signatureId: String) -> String { "offer-signature:" + signatureId }
        /// The signatures issued to one user for one product's offer: a purchase redeeming that
        /// offer, recorded before the ledger named the signature that allowed it, includes them.
        public static func offer(userId: String, productId: String, offerId: String) -> String {
            "offer:\(userId.utf8.count):\(userId):\(productId.utf8.count):\(productId):\(offerId)"
        }
        /// The mass renewal extensions of one product in one environment: a subscription Apple
        /// says it extended (RENEWAL_EXTENDED) or could not (RENEWAL_EXTENSION) includes them,
        /// so its timeline shows who asked, why, and Apple's summary. Apple's per-subscription
        /// notifications name no request, so every mass extension of the product is shown,
        /// each with its request id and date.
        public static func massExtensions(productId: String, environment: String) -> String {
            "mass-extension:\(environment):\(productId)"
        }
    }

    public func changes(for event: LedgerEvent, at place: EventPlace) -> [ProjectionChange] {
        var about: [String] = []
        var links: [(String, String)] = []
        let transaction = Subject.transaction, order = Subject.order, user = Subject.user, submission = Subject.submission
        switch event {
        case .orderCreated(let o):
            about = [order(o.orderId)]
            links = [(user(o.userId), order(o.orderId))]
        case .orderFulfilled(let f):
            about = [order(f.orderId)]
            links = [(order(f.orderId), transaction(f.transactionId))]
        case .receiptSubmitted(let s):
            about = [submission(s.submissionId)]
            links = [(user(s.userId), submission(s.submissionId))]
            if let o = s.orderId { links.append((order(o), submission(s.submissionId))) }
            if let t = s.transactionId, !t.isEmpty { links.append((transaction(t), submission(s.submissionId))) }
        case .appleResponded(let r):
            about = [submission(r.submissionId)]
        case .verificationPending(let p):
            about = [submission(p.submissionId)]
        case .deliveryRejected(let r):
            about = [submission(r.submissionId)]
        case .appleAccountObserved(let a):
            about = [submission(a.submissionId)]
        case .submissionResolved(let r):
            about = [submission(r.submissionId)]
            links = r.transactionIds.map { (transaction($0), submission(r.submissionId)) }
        case .purchaseDelivered(let d):
            about = [transaction(d.transactionId)]
            links = [(user(d.userId), transaction(d.transactionId))]
            if d.originalTransactionId != d.transactionId { links.append((transaction(d.originalTransactionId), transaction(d.transactionId))) }
            // Both ways: the order's timeline shows the delivery, the transaction's the order.
            if let o = d.orderId { links.append((transaction(d.transactionId), order(o))) }
            // A redeemed offer: the purchase's timeline names the signature that allowed it, or,
            // recorded before the ledger attributed one, every signature of that offer.
            if let signature = d.offerSignatureId {
                links.append((transaction(d.transactionId), Subject.offerSignature(signature)))
            } else if let offer = d.offerIdentifier {
                links.append((transaction(d.transactionId), Subject.offer(userId: d.userId, productId: d.productId, offerId: offer)))
            }
        case .subscriptionRenewalSeen(let r):
            about = [transaction(r.transactionId)]
            links = [(user(r.userId), transaction(r.transactionId))]
            if r.originalTransactionId != r.transactionId { links.append((transaction(r.originalTransactionId), transaction(r.transactionId))) }
        case .subscriptionObserved(let o):
            about = [transaction(o.originalTransactionId)]
        case .ownershipClaimed(let c):
            about = [transaction(c.originalTransactionId)]
            links = [(user(c.userId), transaction(c.originalTransactionId))]
        case .ownershipTransferred(let t):
            about = [transaction(t.originalTransactionId)]
            links = [(user(t.fromUserId), transaction(t.originalTransactionId)), (user(t.toUserId), transaction(t.originalTransactionId))]
        case .appleNotificationReceived(let n):
            about = Array(Set([n.transactionId, n.originalTransactionId].compactMap { $0 }.filter { !$0.isEmpty })).sorted().map(transaction)
            if ["RENEWAL_EXTENDED", "RENEWAL_EXTENSION"].contains(n.notificationType), let product = n.productId, let environment = n.environment {
                let mass = Subject.massExtensions(productId: product, environment: environment)
                if n.subtype == "SUMMARY" { about.append(mass) }
                if let original = n.originalTransactionId, !original.isEmpty { links = [(transaction(original), mass)] }
            }
        case .purchaseRefunded(let r):
            about = [transaction(r.transactionId)]
            links = [(user(r.userId), transaction(r.transactionId))]
            if r.originalTransactionId != r.transactionId { links.append((transaction(r.originalTransactionId), transaction(r.transactionId))) }
        case .balanceSpent(let s):
            about = [user(s.userId)] + s.attributions.map { transaction($0.transactionId) }
        case .consumptionConsentRecorded(let c):
            about = [user(c.userId)]
        case .consumptionInformationSent(let c):
            about = [transaction(c.transactionId), user(c.userId)]
        case .consumptionInformationWithheld(let c):
            about = ([c.transactionId.map(transaction), c.userId.map(user)] as [String?]).compactMap { $0 }
        case .appleOrderLookedUp(let o):
            about = o.transactionIds.map(transaction)
        case .transactionHistoryRead(let h):
            about = [submission(h.submissionId)]
        case .transactionInfoRecorded(let i):
            about = [transaction(i.transactionId)]
            if i.originalTransactionId != i.transactionId { links = [(transaction(i.originalTransactionId), transaction(i.transactionId))] }
        case .refundReversed(let v):
            about = [transaction(v.refund.transactionId)]
            links = [(user(v.refund.userId), transaction(v.refund.transactionId))]
        case .subscriptionRenewalExtended(let e):
            about = [transaction(e.originalTransactionId)]
            if e.originalTransactionId != e.transactionId { links = [(transaction(e.originalTransactionId), transaction(e.transactionId))] }
        case .appAccountTokenSet(let a):
            about = [transaction(a.originalTransactionId), user(a.userId)] + (a.previousUserId.map { [user($0)] } ?? [])
        case .transactionFinished(let f):
            about = [transaction(f.transactionId)]
        case .offerSignatureIssued(let o):
            about = [user(o.userId), Subject.offerSignature(o.signatureId)]
                + (o.offerId.map { [Subject.offer(userId: o.userId, productId: o.productId, offerId: $0)] } ?? [])
        case .massRenewalExtensionRequested(let m):
            about = [Subject.massExtensions(productId: m.productId, environment: m.environment)]
        case .massRenewalExtensionCompleted(let m):
            // Completions recorded before they kept the environment were all of Production
            // requests (the command's default, and the only one the console offers).
            about = [Subject.massExtensions(productId: m.productId, environment: m.environment ?? "Production")]
        case .purchaseUnclaimed(let u):
            about = [transaction(u.transactionId)]
            if u.originalTransactionId != u.transactionId { links = [(transaction(u.originalTransactionId), transaction(u.transactionId))] }
        case .reconciliationCompleted:
            return []
        case .catalogLoaded, .appsConfigured, .appStoreReportImported, .pricePointsRefreshed, .userErased, .erasureBegan, .unknown:
            return []
        }
        return about.map { .timelineEvent(subject: $0, position: place.position) }
            + links.filter { $0.0 != $0.1 }.map { .timelineLink(subject: $0.0, includes: $0.1) }
    }
}
