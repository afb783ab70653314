import AppStore

extension Evidence {
    /// What a v1 notification shows: its `unified_receipt` when present, else the old
    /// top-level `latest_receipt_info` / `latest_expired_receipt_info`. Nil when it lists none.
    ///
    /// A top-level `cancellation_date` (old CANCEL bodies) speaks of one transaction, the one the
    /// notification names by `web_order_line_item_id` (or the only one listed); it is never
    /// spread over the others, and only a CANCEL carries it as a refund.
    public init?(notification: NotificationV1) {
        let environment = notification.environment?.rawValue ?? "Production"
        if let unified = notification.unifiedReceipt, !unified.latestReceiptInfo.isEmpty {
            self.init(response: unified, environmentFallback: environment)
            bundleId = notification.bundleID ?? bundleId
            return
        }
        let transactions = notification.latestReceiptInfo + notification.latestExpiredReceiptInfo
        guard !transactions.isEmpty else { return nil }
        let cancelled = Self.cancelledByTopLevel(notification, among: transactions)
        let entries = transactions.map { transaction -> EvidenceEntry in
            var entry = EvidenceEntry(transaction, inApp: false)
            if transaction.transactionID == cancelled {
                entry.cancellationDateMs = entry.cancellationDateMs ?? notification.cancellationDate
            }
            return entry
        }
        // iOS 6 style bodies name the app in each transaction's `bid`, not at the top.
        let bundle = notification.bundleID ?? transactions.lazy.compactMap(\.bundleID).first
        self.init(bundleId: bundle, environment: environment, entries: entries)
    }

    /// The transaction a top-level `cancellation_date` belongs to, if the body says which.
    static func cancelledByTopLevel(_ notification: NotificationV1, among transactions: [ReceiptTransaction]) -> String? {
        guard notification.cancellationDate != nil, notification.notificationType == "CANCEL" else { return nil }
        if let line = notification.webOrderLineItemID {
            return transactions.first { $0.webOrderLineItemID == line }?.transactionID
        }
        return transactions.count == 1 ? transactions[0].transactionID : nil
    }
}
