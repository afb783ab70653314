/// One user's balance of one unit, folded from the log: grants of deliveries, refunds of those
/// grants (all of a grant, or the share a prorated refund took) and their reversals, and spends.
/// Spends are attributed to purchases first in, first out, so the ledger knows how much of each
/// consumable purchase was used (what Apple asks about a refund).
public struct Wallet: Sendable, Hashable {
    public let userId: String
    public let unit: String
    /// Grants minus refunds minus spends. May be negative: a refund of coins already spent.
    public private(set) var balance: Int64 = 0
    /// What is left of each purchase's grant, in the order the purchases were recorded.
    public private(set) var remaining: [(transactionId: String, amount: Int64)] = []
    /// How much of each purchase's grant was spent.
    public private(set) var used: [String: Int64] = [:]
    /// How much each purchase granted.
    public private(set) var granted: [String: Int64] = [:]
    /// The app whose balance this is (coins bought in one app are not spent in another); nil:
    /// every event of the user's, as before several apps.
    public let bundleId: String?
    /// The app of events recorded before several apps (nil: the log names none yet, so they
    /// are `bundleId`'s).
    public let legacyApp: String?

    public init(userId: String, unit: String, bundleId: String? = nil, legacyApp: String? = nil) {
        self.userId = userId
        self.unit = unit
        self.bundleId = bundleId
        self.legacyApp = legacyApp
    }

    /// Whether an event naming `app` (nil: recorded before several apps) is of this wallet's app.
    private func inApp(_ app: String?) -> Bool {
        guard let bundleId else { return true }
        return (app ?? legacyApp ?? bundleId) == bundleId
    }

    public static func == (a: Wallet, b: Wallet) -> Bool {
        a.userId == b.userId && a.unit == b.unit && a.balance == b.balance && a.used == b.used && a.granted == b.granted
            && a.remaining.map(\.transactionId) == b.remaining.map(\.transactionId) && a.remaining.map(\.amount) == b.remaining.map(\.amount)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(userId)
        hasher.combine(unit)
        hasher.combine(balance)
    }

    /// Applies one event, in log order; events of other users or units change nothing.
    public mutating func apply(_ event: LedgerEvent) {
        switch event {
        case .purchaseDelivered(let d) where d.userId == userId && inApp(d.bundleId):
            guard let amount = d.grants[unit], amount != 0 else { return }
            balance += amount
            granted[d.transactionId, default: 0] += amount
            remaining.append((d.transactionId, amount))
        case .purchaseRefunded(let r) where r.userId == userId && r.kind == .consumable && inApp(r.bundleId):
            guard let amount = r.unitsTakenBack[unit], amount != 0 else { return }
            balance -= amount
            guard r.fractionMilli < RefundFraction.whole, let index = remaining.firstIndex(where: { $0.transactionId == r.transactionId }) else {
                // A refunded purchase has nothing left to spend; what was spent of it stays spent.
                remaining.removeAll { $0.transactionId == r.transactionId }
                return
            }
            // A share refunded: what is left of the purchase loses what was taken back.
            remaining[index].amount -= amount
            if remaining[index].amount <= 0 { remaining.remove(at: index) }
        case .refundReversed(let v) where v.refund.userId == userId && v.refund.kind == .consumable && inApp(v.refund.bundleId):
            let r = v.refund
            guard let amount = r.unitsTakenBack[unit], amount != 0 else { return }
            balance += amount
            // What the refund took can be spent again, up to what the purchase granted and was
            // not spent; given back at the end of the line, after the purchases left.
            let left = remaining.filter { $0.transactionId == r.transactionId }.reduce(Int64(0)) { $0 + $1.amount }
            let back = min(amount, (granted[r.transactionId] ?? 0) - (used[r.transactionId] ?? 0) - left)
            guard back > 0 else { return }
            if let index = remaining.firstIndex(where: { $0.transactionId == r.transactionId }) {
                remaining[index].amount += back
            } else {
                remaining.append((r.transactionId, back))
            }
        case .balanceSpent(let s) where s.userId == userId && s.unit == unit && inApp(s.bundleId):
            balance -= s.amount
            for share in s.attributions {
                used[share.transactionId, default: 0] += share.amount
                if let index = remaining.firstIndex(where: { $0.transactionId == share.transactionId }) {
                    remaining[index].amount -= share.amount
                    if remaining[index].amount <= 0 { remaining.remove(at: index) }
                }
            }
        default:
            break
        }
    }

    /// The purchases `amount` would use, oldest first, or nil when the balance is short.
    /// A balance that grants and refunds left positive but that no purchase backs (an import's
    /// adjustments) is spent without attribution.
    public func attributions(for amount: Int64) -> [SpendAttribution]? {
        guard amount > 0, balance >= amount else { return nil }
        var left = amount
        var shares: [SpendAttribution] = []
        for purchase in remaining where left > 0 && purchase.amount > 0 {
            let take = min(left, purchase.amount)
            shares.append(SpendAttribution(transactionId: purchase.transactionId, amount: take))
            left -= take
        }
        return shares
    }

    /// The share of a purchase's grant spent so far, in milliunits (100000 = all of it): what a
    /// consumption answer tells Apple. Nil when the purchase granted nothing of this unit.
    public func consumedMilliunits(of transactionId: String) -> Int64? {
        guard let granted = granted[transactionId], granted > 0 else { return nil }
        return min(100_000, (used[transactionId] ?? 0) * 100_000 / granted)
    }
}
