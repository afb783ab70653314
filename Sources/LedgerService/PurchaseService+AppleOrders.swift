import AppStore
import AppStoreClient
import Foundation
import Ledger
import LedgerStore

/// An Apple order (the id on the customer's receipt e-mail) and what the ledger knows of its
/// transactions.
public struct AppleOrderView: Sendable, Hashable {
    public struct Transaction: Sendable, Hashable {
        public var transactionId: String
        public var originalTransactionId: String
        public var productId: String
        /// The user the ledger delivered it to; nil when the ledger never recorded it.
        public var userId: String?
        /// The storefront's country Apple signed (ISO 3166-1 alpha-3, `Storefront.countryCode`);
        /// nil when it named none.
        public var storefront: String? = nil
        /// The app Apple signed it for.
        public var bundleId: String? = nil
    }

    public var orderId: String
    public var environment: String
    public var transactions: [Transaction]
}

extension PurchaseService {
    /// Looks an order id up with Apple (production, then sandbox), verifies every signed
    /// transaction of Apple's answer, records the answer (`AppleOrderLookedUp`, the body kept
    /// verbatim), and joins the ledger's records. Nil when Apple knows no such order.
    ///
    /// An order id names no app, and Apple answers each app's key about that app's orders: each
    /// app served is asked in turn (`bundleId`: that app only, for a token limited to it).
    public func lookUpAppleOrder(_ orderId: String, bundleId: String? = nil, metadata: RequestMetadata) async throws -> AppleOrderView? {
        let clients = try requireServerAPIClients()
        var asking = clients.all
        if let bundleId {
            guard let client = clients.client(for: bundleId) else { throw LedgerServiceError(.invalidRequest, "this ledger does not serve \(bundleId)") }
            asking = [client]
        }
        // The two environments the Server API serves (Xcode and local testing have none).
        for client in asking {
            for environment in [AppStoreEnvironment.production, .sandbox] {
                let answer: ServerAPIAnswer<OrderLookupResponse>
                do throws(ServerAPIError) {
                    answer = try await client.lookUpOrder(orderId, environment: environment)
                } catch {
                    // Apple refusing the id itself (4xx) says it knows no such order; only an Apple
                    // that cannot answer now is unavailable.
                    if error.kind == .refused { continue }
                    throw LedgerServiceError(.appleUnavailable, "Apple's order look-up: \(error)")
                }
                guard answer.value.status == 0, !answer.value.signedTransactions.isEmpty else { continue }
                var signed: [SignedTransaction] = []
                for jws in answer.value.signedTransactions {
                    do throws(AppStoreError) {
                        signed.append(try await signedData.verifyTransaction(jws).payload)
                    } catch {
                        throw LedgerServiceError(.appleUnavailable, "a transaction in Apple's order answer does not verify: \(error.code)")
                    }
                }
                let ids = signed.compactMap(\.transactionId)
                let document = DocumentStore.insert(answer.body, kind: "apple_order_lookup", sealedFor: try await documentSeal(for: signed))
                try await mappingDatabaseErrors {
                    try await log.append(
                        [LedgerAppend(stream: Streams.appleOrder(orderId), expectation: .any, events: [.appleOrderLookedUp(AppleOrderLookedUp(
                            orderId: orderId, environment: environment.rawValue, transactionIds: ids, documentSha256: document.name, atMs: clock()))])],
                        metadata: metadata, alongside: [document.statement])
                }
                let records = Dictionary(try await reads.transactionRecords(ids).map { ($0.delivery.transactionId, $0) }, uniquingKeysWith: { a, _ in a })
                return AppleOrderView(orderId: orderId, environment: environment.rawValue, transactions: signed.map { t in
                    let id = t.transactionId ?? ""
                    return AppleOrderView.Transaction(
                        transactionId: id, originalTransactionId: t.originalTransactionId ?? id, productId: t.productId ?? "",
                        userId: records[id]?.userId, storefront: Storefront.countryCode(t.storefront), bundleId: t.bundleId)
                })
            }
        }
        return nil
    }
}
