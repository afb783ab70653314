/// Decides what a submission delivers (docs/architecture.md §4): a pure function of the submission,
/// Apple's evidence and what the ledger recorded before. No I/O; the service appends the
/// result with the expected versions it carries, and decides again if another decision won.
public enum PurchaseDecider {
    /// Decides a submission whose evidence Apple vouched for (status 0 or 21006, or a verified
    /// signed transaction). Receipts, signed transactions, the retry worker and history imports
    /// all come through here, so one rule holds on every path.
    public static func decide(_ submission: Submission, evidence: Evidence, context: PurchaseContext) -> Decision {
        if let refusal = AppCheck.refusal(of: evidence, bundleId: context.bundleId) {
            return reject(.bundleIdMismatch, refusal)
        }
        let account = appleAccount(of: evidence, submissionId: submission.submissionId)
        var decision = decideForApp(submission, evidence: evidence, context: context)
        decision.appleAccount = account
        return decision
    }

    /// A restore through Apple: the account's whole transaction history, decided as a receipt
    /// without transaction id, but a consumable is owed only where the user has an open order
    /// for it. History lists every consumable the account ever bought (finished ones too,
    /// purchases made before the ledger existed among them); granting those again would pay twice.
    public static func decideRestore(_ submission: Submission, evidence: Evidence, context: PurchaseContext) -> Decision {
        var owed = evidence
        owed.entries = evidence.entries.filter { entry in
            context.catalog[entry.productId]?.kind != .consumable
                || context.openOrders.contains { $0.userId == submission.userId && $0.productId == entry.productId }
        }
        return decide(submission, evidence: owed, context: context)
    }

    /// The receipt's transactions as one Apple account's, when it lists more than one purchase.
    static func appleAccount(of evidence: Evidence, submissionId: String) -> AppleAccountObserved? {
        let originals = Set(evidence.entries.map(\.originalTransactionId)).sorted()
        guard originals.count > 1 else { return nil }
        return AppleAccountObserved(
            submissionId: submissionId, environment: evidence.environment, originalTransactionIds: originals,
            appTransactionId: evidence.entries.compactMap(\.appTransactionId).min())
    }

    /// `decide` once the evidence is known to be this app's.
    static func decideForApp(_ submission: Submission, evidence: Evidence, context: PurchaseContext) -> Decision {
        var work = Work(submission: submission, evidence: evidence, context: context)
        if let transactionId = submission.transactionId {
            guard let entry = evidence.entry(transactionId) else {
                return work.rejecting(.transactionNotInReceipt, "transaction \(transactionId) is not in the receipt Apple verified")
            }
            if case .refused(let code, let message) = work.deliver(entry) {
                return work.rejecting(code, message)
            }
        } else {
            // The first refusal of each kind: when nothing is delivered, the answer names why.
            var refusals: [RejectionCode: String] = [:]
            // Oldest first: `in_app` is not sorted, and a subscription's first purchase must take
            // the order and the ownership before its renewals are seen as renewals.
            for entry in work.entries where entry.inApp && !work.isRenewal(entry) {
                if case .refused(let code, let message) = work.deliver(entry), refusals[code] == nil {
                    refusals[code] = message
                }
            }
            if work.delivered.isEmpty, work.already.isEmpty {
                // The most telling reason first: the client can act on an owner or a catalog gap.
                for code in [RejectionCode.ownedByAnotherUser, .unknownProduct, .transactionRefunded] {
                    if let message = refusals[code] { return work.rejecting(code, message) }
                }
            }
        }
        work.recordRenewalsRefundsAndObservations(source: submission.submissionId)
        if !work.delivered.isEmpty {
            return Decision(outcome: .delivered(work.delivered), appends: work.appends)
        }
        if !work.already.isEmpty {
            return Decision(outcome: .alreadyDelivered(work.already), appends: work.appends)
        }
        return Decision(
            outcome: .rejected(.transactionNotInReceipt, "the receipt lists no purchase made on the device that the ledger has not delivered"),
            appends: work.appends)
    }

    /// What a notification or a later body says about transactions already in the ledger:
    /// renewals, refunds and subscription state. Delivers nothing.
    public static func observe(_ evidence: Evidence, source: String, context: PurchaseContext) -> [LedgerAppend] {
        var work = Work(submission: Submission(submissionId: source, userId: ""), evidence: evidence, context: context)
        work.recordRenewalsRefundsAndObservations(source: source)
        return work.appends
    }

    /// Reconciliation's recovery (docs/backup-and-restore.md): each purchase in `evidence` the
    /// ledger has no record of (its order, receipt and delivery lost by a restore, or never
    /// submitted) is delivered to the user the log names for it: the order its app account token
    /// names, else the holder of its original transaction, else the user its Apple account's other
    /// purchases went to (`accountUsers`). One the log cannot place is recorded
    /// unclaimed, for the first user who submits it. When it placed any, then what `observe`
    /// records of the subscriptions now held (the notification's own pass saw no holder). A
    /// purchase recorded before, delivered or unclaimed, is left as it is: recovery happens once.
    /// Load the context with the user's open orders (`recoveryUsers`' first) so that a recovered
    /// purchase fulfils the order its token names.
    public static func recover(_ evidence: Evidence, source: String, context: PurchaseContext) -> [LedgerAppend] {
        let (placed, unplaced) = placement(evidence, context: context)
        var appends: [LedgerAppend] = []
        var context = context
        for (user, entries) in placed.sorted(by: { $0.key < $1.key }) {
            var work = Work(submission: Submission(submissionId: source, userId: user), evidence: evidence, context: context)
            for entry in work.entries where entries.contains(entry) { _ = work.deliver(entry) }
            appends += work.appends
            for delivery in work.deliveries.values { context.transactions[delivery.transactionId] = .delivered(delivery) }
            context.owners = work.owners
        }
        for entry in unplaced {
            guard let product = context.catalog[entry.productId] else { continue }
            let unclaimed = PurchaseUnclaimed(
                transactionId: entry.transactionId, originalTransactionId: entry.originalTransactionId, productId: product.productId,
                kind: product.kind, quantity: entry.quantity, environment: evidence.environment, purchaseDateMs: entry.purchaseDateMs,
                priceMilliunits: entry.priceMilliunits, currency: entry.currency, appAccountToken: entry.appAccountToken, source: source,
                bundleId: evidence.bundleId)
            appends.append(LedgerAppend(
                stream: Streams.transaction(entry.transactionId), expectation: .noStream, events: [.purchaseUnclaimed(unclaimed)]))
        }
        guard !placed.isEmpty else { return appends }
        var work = Work(submission: Submission(submissionId: source, userId: ""), evidence: evidence, context: context)
        work.recordRenewalsRefundsAndObservations(source: source)
        return appends + work.appends
    }

    /// The users `recover` would deliver to, in order: whose open orders its context should hold.
    public static func recoveryUsers(_ evidence: Evidence, context: PurchaseContext) -> [String] {
        placement(evidence, context: context).placed.keys.sorted()
    }

    /// Which unknown purchases of `evidence` go to which user, and which to no one.
    static func placement(_ evidence: Evidence, context: PurchaseContext) -> (placed: [String: [EvidenceEntry]], unplaced: [EvidenceEntry]) {
        var placed: [String: [EvidenceEntry]] = [:]
        var unplaced: [EvidenceEntry] = []
        for entry in evidence.entries where context.transactions[entry.transactionId] == nil && !entry.isRefunded {
            guard let product = context.catalog[entry.productId] else { continue }
            let holder = context.owners[entry.originalTransactionId]?.userId
            // A later period of a held subscription is a renewal, which `observe` records.
            if product.kind == .autoRenewable, entry.transactionId != entry.originalTransactionId, holder != nil { continue }
            // The order its token names, else the holder of its original, else the user its Apple
            // account's other purchases went to.
            if let user = entry.appAccountToken.flatMap({ context.ordersByToken[$0]?.userId }) ?? holder
                ?? context.accountUsers[entry.transactionId] {
                placed[user, default: []].append(entry)
            } else {
                unplaced.append(entry)
            }
        }
        return (placed, unplaced)
    }

    /// What REFUND_REVERSED changes: the refund recorded for the transaction (its stream's only
    /// event) is reversed once, by an append expecting that stream at version 1. Nothing when
    /// the ledger recorded no refund, or already a reversal.
    public static func reverse(_ refundStream: [LedgerEvent], at reversedAtMs: Int64, source: String) -> LedgerAppend? {
        guard refundStream.count == 1, case .purchaseRefunded(let refund) = refundStream[0] else { return nil }
        return LedgerAppend(
            stream: Streams.refund(refund.transactionId), expectation: .exactly(1),
            events: [.refundReversed(RefundReversed(refund: refund, reversedAtMs: reversedAtMs, source: source))])
    }

    static func reject(_ code: RejectionCode, _ message: String) -> Decision {
        Decision(outcome: .rejected(code, message), appends: [])
    }
}

/// The state of one decision while it is being made.
struct Work {
    let submission: Submission
    let evidence: Evidence
    let context: PurchaseContext
    var appends: [LedgerAppend] = []
    var delivered: [Delivery] = []
    var already: [Delivery] = []
    /// Owners after this decision's own claims and transfers.
    var owners: [String: Ownership]
    /// Deliveries of this decision and before, by transaction id.
    var deliveries: [String: PurchaseDelivered] = [:]
    var usedOrders: Set<String> = []
    /// Renewals recorded by this decision, by transaction id.
    var renewals: [String: SubscriptionRenewalSeen] = [:]
    /// Apple's entries by purchase date (undated last), then id: Apple does not sort them, and
    /// renewals recorded in date order rate their commission the same whatever order Apple chose.
    let entries: [EvidenceEntry]

    init(submission: Submission, evidence: Evidence, context: PurchaseContext) {
        self.submission = submission
        self.evidence = evidence
        self.context = context
        self.entries = evidence.entries.sorted {
            ($0.purchaseDateMs ?? .max, $0.transactionId) < ($1.purchaseDateMs ?? .max, $1.transactionId)
        }
        self.owners = context.owners
        for case .delivered(let d) in context.transactions.values { deliveries[d.transactionId] = d }
    }

    /// The submission refused; what Apple's verified answer shows of held subscriptions and
    /// refunds is recorded all the same (a refund proven in a refused body still reverses).
    mutating func rejecting(_ code: RejectionCode, _ message: String) -> Decision {
        recordRenewalsRefundsAndObservations(source: submission.submissionId)
        return Decision(outcome: .rejected(code, message), appends: appends)
    }

    /// A later transaction of a subscription someone already holds.
    func isRenewal(_ entry: EvidenceEntry) -> Bool {
        guard context.catalog[entry.productId]?.kind == .autoRenewable else { return false }
        return entry.transactionId != entry.originalTransactionId && owners[entry.originalTransactionId] != nil
    }

    /// What `deliver` did with one entry.
    enum EntryVerdict: Equatable {
        /// Recorded as delivered (or transferred) to the submitting user by this decision.
        case delivered
        /// Delivered to this user before; it stands.
        case alreadyDelivered
        /// Not delivered, for the reason given (the answer's code when nothing else is delivered).
        case refused(RejectionCode, String)
    }

    /// Delivers one entry to the submitting user, or says why not. An entry that matches none of
    /// the user's open orders is delivered to the user all the same, its reason recorded as
    /// `no_order` (docs/architecture.md §4): the user paid Apple for it.
    mutating func deliver(_ entry: EvidenceEntry) -> EntryVerdict {
        let user = submission.userId
        guard let product = context.catalog[entry.productId] else {
            return .refused(.unknownProduct, "product \(entry.productId) is not in the catalog")
        }
        let owner = owners[entry.originalTransactionId]
        // Recorded unclaimed by reconciliation: the first user who submits it is delivered it.
        let unclaimed = context.transactions[entry.transactionId]?.isUnclaimed == true
        if let previous = context.transactions[entry.transactionId], !unclaimed {
            if previous.userId == user || owner?.userId == user {
                // Delivered to this user before (or transferred to them since): it stands.
                already.append(previous.delivery)
                fulfillOrder(of: entry, product: product, recordedWithout: previous)
                return .alreadyDelivered
            }
            guard product.kind.isOwned else {
                return .refused(.ownedByAnotherUser, "transaction \(entry.transactionId) was delivered to another user")
            }
            if entry.isRefunded { return refunded(entry) }
            return transfer(entry, product: product, from: owner, claimTransaction: false)
        }
        if entry.isRefunded { return refunded(entry) }
        if product.kind.isOwned, let owner, owner.userId != user {
            // Restoring on this user's device what another user holds (a new transaction id of
            // the same original). Transferred or refused per the policy, with or without an order.
            return transfer(entry, product: product, from: owner, claimTransaction: true)
        }
        let (order, reason) = matchOrder(entry, product: product)
        // Every transaction of a subscription in Apple's answer is a paid period (or a trial):
        // new to the ledger, and the user holds the subscription, it is a renewal, upgrade or
        // resubscription, with or without an order.
        let renewing = product.kind == .autoRenewable && owner?.userId == user
        var match = reason
        // The user already holds it: a non-consumable restored or bought again is no new
        // payment and grants no units again, whichever order it fulfils.
        let restoring = product.kind.isOwned && owner?.userId == user
        if restoring && !renewing { match = .restore }
        if renewing, order == nil { match = .renewal }
        let delivery = makeDelivery(
            entry, product: product, orderId: order?.orderId,
            grants: restoring ? [:] : product.grants.mapValues { $0 * entry.quantity }, match: match)
        appends.append(LedgerAppend(
            stream: Streams.transaction(entry.transactionId), expectation: unclaimed ? .exactly(1) : .noStream,
            events: [.purchaseDelivered(delivery)]))
        if let order {
            usedOrders.insert(order.orderId)
            appends.append(LedgerAppend(
                stream: Streams.order(order.orderId), expectation: .exactly(1),
                events: [.orderFulfilled(OrderFulfilled(orderId: order.orderId, transactionId: entry.transactionId))]))
        }
        if product.kind.isOwned, owner == nil {
            owners[entry.originalTransactionId] = Ownership(userId: user, streamVersion: 1)
            appends.append(LedgerAppend(
                stream: Streams.ownership(entry.originalTransactionId), expectation: .noStream,
                events: [.ownershipClaimed(OwnershipClaimed(
                    originalTransactionId: entry.originalTransactionId, productId: product.productId, kind: product.kind,
                    userId: user, transactionId: entry.transactionId, environment: evidence.environment, bundleId: evidence.bundleId))]))
        }
        deliveries[entry.transactionId] = delivery
        delivered.append(Delivery(delivery))
        return .delivered
    }

    private func refunded(_ entry: EvidenceEntry) -> EntryVerdict {
        .refused(.transactionRefunded, "Apple refunded or revoked transaction \(entry.transactionId)")
    }

    /// Another user holds what this user submitted: refuse, or move it, per the policy.
    /// With `claimTransaction`, the transaction is new to the ledger and is recorded as
    /// delivered to the new owner (granting nothing again), so it is never delivered twice.
    private mutating func transfer(_ entry: EvidenceEntry, product: Product, from owner: Ownership?, claimTransaction: Bool) -> EntryVerdict {
        guard context.transferPolicy == .transfer, let owner else {
            return .refused(.ownedByAnotherUser, "\(product.productId) (original transaction \(entry.originalTransactionId)) belongs to another user")
        }
        let user = submission.userId
        if claimTransaction {
            let delivery = makeDelivery(entry, product: product, orderId: nil, grants: [:], match: .transferred)
            appends.append(LedgerAppend(stream: Streams.transaction(entry.transactionId), expectation: .noStream, events: [.purchaseDelivered(delivery)]))
            deliveries[entry.transactionId] = delivery
        }
        appends.append(LedgerAppend(
            stream: Streams.ownership(entry.originalTransactionId), expectation: .exactly(owner.streamVersion),
            events: [.ownershipTransferred(OwnershipTransferred(
                originalTransactionId: entry.originalTransactionId, productId: product.productId, kind: product.kind,
                fromUserId: owner.userId, toUserId: user, transactionId: entry.transactionId,
                submissionId: submission.submissionId, environment: evidence.environment, bundleId: evidence.bundleId))]))
        owners[entry.originalTransactionId] = Ownership(userId: user, streamVersion: owner.streamVersion + 1)
        delivered.append(Delivery(
            transactionId: entry.transactionId, originalTransactionId: entry.originalTransactionId, productId: product.productId,
            orderId: nil, userId: user, quantity: entry.quantity, environment: evidence.environment))
        return .delivered
    }

    /// A transaction recorded before without an order (a resubscription a notification
    /// reported before the app posted its receipt) fulfills the order the app names for it, by
    /// order id or by the transaction's `app_account_token`: the app created that order for this
    /// purchase, which would otherwise stay open. A match by product and time alone is too weak
    /// to close an order after the fact.
    private mutating func fulfillOrder(of entry: EvidenceEntry, product: Product, recordedWithout previous: TransactionRecord) {
        guard previous.delivery.orderId == nil, previous.userId == submission.userId else { return }
        let (order, reason) = matchOrder(entry, product: product)
        guard let order, reason == .orderId || reason == .appAccountToken else { return }
        usedOrders.insert(order.orderId)
        appends.append(LedgerAppend(
            stream: Streams.order(order.orderId), expectation: .exactly(1),
            events: [.orderFulfilled(OrderFulfilled(orderId: order.orderId, transactionId: entry.transactionId))]))
    }

    /// `entry` delivered to the submitting user.
    private func makeDelivery(
        _ entry: EvidenceEntry, product: Product, orderId: String?, grants: [String: Int64], match: MatchReason
    ) -> PurchaseDelivered {
        PurchaseDelivered(
            transactionId: entry.transactionId, originalTransactionId: entry.originalTransactionId, productId: product.productId,
            kind: product.kind, quantity: entry.quantity, userId: submission.userId, orderId: orderId, environment: evidence.environment,
            purchaseDateMs: entry.purchaseDateMs, expiresDateMs: entry.expiresDateMs, priceMilliunits: entry.priceMilliunits,
            currency: entry.currency, appAccountToken: entry.appAccountToken, appTransactionId: entry.appTransactionId,
            isTrial: entry.isTrial, grants: grants, submissionId: submission.submissionId, match: match,
            familyShared: entry.isFamilyShared ? true : nil, storefront: entry.storefront,
            billingPlanType: entry.rawBillingPlanType, commitment: entry.commitment, offerIdentifier: entry.offerIdentifier,
            offerSignatureId: OfferAttribution.signature(allowing: entry, userId: submission.userId, among: context.offerSignatures)?.signatureId,
            bundleId: evidence.bundleId)
    }

    /// The order this purchase pays for, and how it was found (docs/architecture.md §4: a token or
    /// username may be empty or belong to another account; then product and purchase time).
    private func matchOrder(_ entry: EvidenceEntry, product: Product) -> (OrderCreated?, MatchReason) {
        let user = submission.userId
        let open = context.openOrders.filter { $0.userId == user && !usedOrders.contains($0.orderId) }
        if let named = submission.orderId, let order = open.first(where: { $0.orderId == named }), order.productId == product.productId {
            return (order, .orderId)
        }
        var switched = false
        if let token = entry.appAccountToken, let order = context.ordersByToken[token] {
            if order.userId == user, order.productId == product.productId, open.contains(where: { $0.orderId == order.orderId }) {
                return (order, .appAccountToken)
            }
            switched = order.userId != user
        }
        // The latest open order for the product created before the purchase (a little clock
        // skew allowed); without a purchase date, the oldest open one.
        let skewMs: Int64 = 5 * 60 * 1000
        let candidates = open.filter { $0.productId == product.productId }
        let chosen: OrderCreated?
        if let purchased = entry.purchaseDateMs {
            chosen = candidates.filter { $0.createdAtMs <= purchased + skewMs }.max { $0.createdAtMs < $1.createdAtMs }
        } else {
            chosen = candidates.first
        }
        if let chosen { return (chosen, switched ? .accountSwitched : .productAndTime) }
        return (nil, .noOrder)
    }

    /// Renewals of held subscriptions, refunds of delivered transactions, and what Apple shows
    /// of each held subscription.
    mutating func recordRenewalsRefundsAndObservations(source: String) {
        for entry in entries {
            guard let product = context.catalog[entry.productId] else { continue }
            let id = entry.transactionId
            // The original purchase too, when a later transaction was the one delivered: each
            // period Apple lists is recorded once, whichever of them came first.
            if product.kind == .autoRenewable, deliveries[id] == nil, context.transactions[id] == nil,
               let owner = owners[entry.originalTransactionId] {
                let renewal = SubscriptionRenewalSeen(
                    transactionId: id, originalTransactionId: entry.originalTransactionId, productId: entry.productId,
                    userId: owner.userId, environment: evidence.environment, purchaseDateMs: entry.purchaseDateMs,
                    expiresDateMs: entry.expiresDateMs, isTrial: entry.isTrial, priceMilliunits: entry.priceMilliunits,
                    currency: entry.currency, source: source, familyShared: entry.isFamilyShared ? true : nil,
                    storefront: entry.storefront, billingPlanType: entry.rawBillingPlanType, commitment: entry.commitment,
                    bundleId: evidence.bundleId)
                renewals[id] = renewal
                appends.append(LedgerAppend(stream: Streams.transaction(id), expectation: .noStream, events: [.subscriptionRenewalSeen(renewal)]))
            }
            // Refunds and revocations, and upgrades too: Apple refunds an upgraded transaction's
            // unused share (or says nothing of it, which is recorded as such).
            if entry.isRefunded || entry.isUpgradedAway, !context.refunded.contains(id),
               let refund = refund(of: entry, product: product, source: source) {
                appends.append(LedgerAppend(stream: Streams.refund(id), expectation: .noStream, events: [.purchaseRefunded(refund)]))
            }
        }
        var seen = Set<String>()
        for entry in entries where context.catalog[entry.productId]?.kind == .autoRenewable {
            let original = entry.originalTransactionId
            guard owners[original] != nil, seen.insert(original).inserted else { continue }
            let entries = evidence.entries.filter { $0.originalTransactionId == original }.map(\.subscriptionEntry)
            appends.append(LedgerAppend(
                stream: Streams.subscription(original), expectation: .any,
                events: [.subscriptionObserved(SubscriptionObserved(
                    originalTransactionId: original, environment: evidence.environment, entries: entries,
                    renewal: evidence.renewals[original], source: source))]))
        }
    }

    private func refund(of entry: EvidenceEntry, product: Product, source: String) -> PurchaseRefunded? {
        guard let at = entry.cancellationDateMs else { return nil }
        let user: String
        let grants: [String: Int64]
        let quantity: Int64
        if let delivery = deliveries[entry.transactionId] {
            user = delivery.userId
            grants = delivery.grants
            quantity = delivery.quantity
        } else if let renewal = renewals[entry.transactionId] ?? context.transactions[entry.transactionId]?.renewal {
            user = renewal.userId
            grants = [:]
            quantity = 1
        } else {
            return nil
        }
        // docs/configuration.md "Money": the share of the money Apple refunded, and as much of the grant,
        // rounded up; all of both for a full refund, as before shares were recorded.
        let fraction = RefundFraction.of(entry)
        let partial = fraction < RefundFraction.whole
        return PurchaseRefunded(
            transactionId: entry.transactionId, originalTransactionId: entry.originalTransactionId, productId: entry.productId,
            kind: product.kind, quantity: quantity, userId: user, environment: evidence.environment, grants: grants,
            refundedAtMs: at, reason: entry.cancellationReason, revocation: entry.isRevocation ? "revoke" : "refund", source: source,
            rawRevocationType: entry.rawRevocationType, revocationPercentage: entry.revocationPercentage,
            refundedFractionMilli: partial ? fraction : nil, upgraded: entry.isUpgraded ? true : nil,
            grantsTakenBack: partial ? grants.mapValues { RefundFraction.units($0, fraction) }.filter { $0.value != 0 } : nil,
            bundleId: evidence.bundleId)
    }
}
