import Testing

@testable import Ledger

/// A user's balance of one unit and what each purchase of it was used for, first in, first out.
@Suite("Wallets: spending attributed first in, first out")
struct WalletTests {
    static func spent(_ amount: Int64, _ shares: [SpendAttribution], id: String) -> LedgerEvent {
        .balanceSpent(BalanceSpent(
            userId: Given.alice, unit: "coins", amount: amount, spendId: id, reason: nil, balanceAfter: 0, attributions: shares, spentAtMs: Given.t0))
    }

    @Test("a spend takes from the oldest purchase first, then the next")
    func firstInFirstOut() {
        var wallet = Wallet(userId: Given.alice, unit: "coins")
        wallet.apply(.purchaseDelivered(Given.delivered("C1", Given.coins, to: Given.alice)))
        wallet.apply(.purchaseDelivered(Given.delivered("C2", Given.coins, to: Given.alice)))
        wallet.apply(.purchaseDelivered(Given.delivered("X", Given.coins, to: Given.bob)))
        #expect(wallet.balance == 200)
        let shares = wallet.attributions(for: 130)
        #expect(shares == [SpendAttribution(transactionId: "C1", amount: 100), SpendAttribution(transactionId: "C2", amount: 30)])
        wallet.apply(Self.spent(130, shares ?? [], id: "s1"))
        #expect(wallet.balance == 70)
        #expect(wallet.consumedMilliunits(of: "C1") == 100_000)
        #expect(wallet.consumedMilliunits(of: "C2") == 30_000)
        #expect(wallet.attributions(for: 71) == nil, "never below zero")
        #expect(wallet.attributions(for: 70) == [SpendAttribution(transactionId: "C2", amount: 70)])
    }

    @Test("a refunded purchase has nothing left to spend; what was spent of it stays spent")
    func refunds() {
        var wallet = Wallet(userId: Given.alice, unit: "coins")
        wallet.apply(.purchaseDelivered(Given.delivered("C1", Given.coins, to: Given.alice)))
        wallet.apply(.purchaseDelivered(Given.delivered("C2", Given.coins, to: Given.alice)))
        wallet.apply(Self.spent(40, [SpendAttribution(transactionId: "C1", amount: 40)], id: "s1"))
        wallet.apply(.purchaseRefunded(PurchaseRefunded(
            transactionId: "C1", originalTransactionId: "C1", productId: Given.coins, kind: .consumable, quantity: 1, userId: Given.alice,
            environment: "Production", grants: ["coins": 100], refundedAtMs: Given.t0, reason: nil, revocation: "refund", source: "n")))
        #expect(wallet.balance == 60)
        #expect(wallet.consumedMilliunits(of: "C1") == 40_000)
        #expect(wallet.attributions(for: 60) == [SpendAttribution(transactionId: "C2", amount: 60)])
    }
}
