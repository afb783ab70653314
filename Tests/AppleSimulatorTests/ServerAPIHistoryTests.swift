import AppleSimulator
import Foundation
import Testing

@Suite("transaction history, refund history, subscription statuses and order look-up")
struct ServerAPIHistoryTests {
    @Test("history pages 20 at a time with revision and hasMore, and a kept revision returns what changed since")
    func paging() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let simulator = running.simulator
            var bought: [String] = []
            for _ in 0..<25 {
                bought.append(try await simulator.purchase(appleId: "h", productId: "com.example.coins100").transactionId)
            }
            _ = try await simulator.purchase(appleId: "someone-else", productId: "com.example.coins100")
            let token = try await key.token()
            let history = "\(running.serverAPIURL)/inApps/v2/history/\(bought[3])"

            let first = try await ServerAPIHTTP.get(history, token: token)
            #expect(first.status == 200)
            #expect(first.json?["hasMore"] as? Bool == true)
            #expect(first.json?["bundleId"] as? String == "com.example.app")
            #expect(int64(first.json?["appAppleId"]) == 1234)
            #expect(first.json?["environment"] as? String == "Sandbox")
            let revision = try #require(first.json?["revision"] as? String)
            let second = try await ServerAPIHTTP.get("\(history)?revision=\(revision)", token: token)
            #expect(second.json?["hasMore"] as? Bool == false)
            #expect(try first.transactionIds() + second.transactionIds() == bought)
            #expect(try first.transactionIds().count == 20)

            // A refund changes the transaction: it comes again after the last page's revision.
            try await simulator.refund(transactionId: bought[0])
            let lastRevision = try #require(second.json?["revision"] as? String)
            let changed = try await ServerAPIHTTP.get("\(history)?revision=\(lastRevision)", token: token)
            #expect(try changed.transactionIds() == [bought[0]])
            let refunded = try jwsPayload(try #require(changed.signedTransactions.first))
            #expect(refunded["revocationDate"] != nil)
            #expect(changed.json?["hasMore"] as? Bool == false)

            let revoked = try await ServerAPIHTTP.get("\(history)?revoked=true", token: token)
            #expect(try revoked.transactionIds() == [bought[0]])
            let newestFirst = try await ServerAPIHTTP.get("\(history)?sort=DESCENDING", token: token)
            #expect(try newestFirst.transactionIds().prefix(2) == [bought[0], bought[24]])
            let subscriptions = try await ServerAPIHTTP.get("\(history)?productType=AUTO_RENEWABLE", token: token)
            #expect(subscriptions.signedTransactions.isEmpty)
            #expect(subscriptions.json?["hasMore"] as? Bool == false)
            let badSort = try await ServerAPIHTTP.get("\(history)?sort=SIDEWAYS", token: token)
            #expect(badSort.status == 400)
            #expect(badSort.errorCode == 4_000_021)
            let badRevision = try await ServerAPIHTTP.get("\(history)?revision=nonsense", token: token)
            #expect(badRevision.errorCode == 4_000_005)
        }
    }

    @Test("statuses, refund history and order look-up answer for the account and its environment")
    func subscriptionRefundsAndOrders() async throws {
        let key = ServerAPIKey()
        try await SimulatorHarness.withServer(key.configuration()) { running in
            let simulator = running.simulator
            let subscription = try await simulator.purchase(
                appleId: "s", productId: "com.example.pro.monthly", environment: .production)
            let removeAds = try await simulator.purchase(
                appleId: "s", productId: "com.example.removeads", environment: .production)
            try await simulator.advance(days: 8)
            try await simulator.refund(transactionId: removeAds.transactionId)
            let renewal = try #require(simulator.transactions(of: "s").last)
            let token = try await key.token()

            let statuses = try await ServerAPIHTTP.get(
                "\(running.serverAPIURL)/inApps/v1/subscriptions/\(removeAds.transactionId)", token: token)
            #expect(statuses.status == 200)
            #expect(statuses.json?["environment"] as? String == "Production")
            let groups = try #require(statuses.json?["data"] as? [[String: Any]])
            #expect(groups.count == 1)
            #expect(groups.first?["subscriptionGroupIdentifier"] as? String == "20654194")
            let last = try #require((groups.first?["lastTransactions"] as? [[String: Any]])?.first)
            #expect(last["status"] as? Int == 1)
            #expect(last["originalTransactionId"] as? String == subscription.transactionId)
            let info = try jwsPayload(try #require(last["signedTransactionInfo"] as? String))
            #expect(info["transactionId"] as? String == renewal.transactionId)
            let renewalInfo = try jwsPayload(try #require(last["signedRenewalInfo"] as? String))
            #expect(renewalInfo["autoRenewStatus"] as? Int == 1)
            let expired = try await ServerAPIHTTP.get(
                "\(running.serverAPIURL)/inApps/v1/subscriptions/\(removeAds.transactionId)?status=2", token: token)
            #expect((expired.json?["data"] as? [Any])?.isEmpty == true)

            let refunds = try await ServerAPIHTTP.get(
                "\(running.serverAPIURL)/inApps/v2/refund/lookup/\(subscription.transactionId)", token: token)
            #expect(try refunds.transactionIds() == [removeAds.transactionId])
            #expect(refunds.json?["hasMore"] as? Bool == false)
            #expect(refunds.json?["revision"] is String)

            #expect(removeAds.orderId.count == 10)
            #expect(removeAds.orderId.allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) })
            #expect(Set(simulator.transactions(of: "s").map(\.orderId)).count == 3)
            let order = try await ServerAPIHTTP.get("\(running.serverAPIURL)/inApps/v1/lookup/\(removeAds.orderId)", token: token)
            #expect(order.json?["status"] as? Int == 0)
            #expect(try order.transactionIds() == [removeAds.transactionId])
            let unknown = try await ServerAPIHTTP.get("\(running.serverAPIURL)/inApps/v1/lookup/ZZZZZZZZZZ", token: token)
            #expect(unknown.status == 200)
            #expect(unknown.json?["status"] as? Int == 1)
            #expect(unknown.json?["signedTransactions"] == nil)
        }
    }
}
