/// What a device holds after a purchase: the transaction, the receipt and the StoreKit 2 JWS.
public struct PurchaseResult: Sendable, Hashable {
    public var transaction: SimulatedTransaction
    /// The receipt-data (base64) the device sends to the ledger's `/v1/receipts`.
    public var receiptData: String
    /// StoreKit 2 `jwsRepresentation` for the ledger's `/v1/transactions`.
    public var signedTransaction: String

    /// Shortcut for `transaction.transactionId`.
    public var transactionId: String { transaction.transactionId }
    /// Shortcut for `transaction.orderId`: what the customer quotes from their receipt.
    public var orderId: String { transaction.orderId }
}
