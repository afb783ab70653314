import Foundation
import Hummingbird

/// The App Store Server API endpoints that change a transaction: Set App Account Token and
/// Finish Transaction. Both answer 200 with no body.
extension ServerAPIRoutes {
    func registerTransactionUpdates(on router: Router<BasicRequestContext>) {
        // The parameter keeps the name of Get Transaction Info's, at the same place in the path,
        // so the router holds one parameter node there; it is the original transaction's id.
        router.put("inApps/v1/transactions/:transactionId/appAccountToken") { request, context in
            await answer(.setAppAccountToken, request) { bundleId in
                let body = try await HTTPReplies.body(of: request)
                try simulator.serverAPISetAppAccountToken(try context.parameters.require("transactionId"), body: body, bundleId: bundleId)
                return .empty
            }
        }
        router.post("inApps/v1/transactions/:transactionId/finish") { request, context in
            await answer(.finishTransaction, request) { bundleId in
                try simulator.serverAPIFinishTransaction(try context.parameters.require("transactionId"), bundleId: bundleId)
                return .empty
            }
        }
    }
}
