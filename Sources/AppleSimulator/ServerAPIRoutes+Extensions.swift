import Foundation
import Hummingbird

/// The renewal-date extension endpoints of the App Store Server API, answered like the others
/// (`answer`: counted, failures injected, JWT checked).
extension ServerAPIRoutes {
    func registerExtensions(on router: Router<BasicRequestContext>) {
        router.put("inApps/v1/subscriptions/extend/:originalTransactionId") { request, context in
            await answer(.extendRenewalDate, request) { bundleId in
                let body = try await HTTPReplies.body(of: request)
                return .json(
                    try await simulator.serverAPIExtendRenewalDate(
                        try context.parameters.require("originalTransactionId"), body: body, bundleId: bundleId))
            }
        }
        router.post("inApps/v1/subscriptions/extend/mass") { request, _ in
            await answer(.massExtendRenewalDate, request) { bundleId in
                let body = try await HTTPReplies.body(of: request)
                return .json(try simulator.serverAPIMassExtendRenewalDate(body: body, environment: try Self.environment(of: request), bundleId: bundleId))
            }
        }
        router.get("inApps/v1/subscriptions/extend/mass/:productId/:requestIdentifier") { request, context in
            await answer(.massExtendRenewalDateStatus, request) { bundleId in
                .json(
                    try await simulator.serverAPIMassExtensionStatus(
                        productId: try context.parameters.require("productId"),
                        requestIdentifier: try context.parameters.require("requestIdentifier"), bundleId: bundleId))
            }
        }
    }

    /// Not Apple's: the simulator serves both environments on one URL, so a call that acts on
    /// one names it in `?environment=` (default Sandbox), as Request a Test Notification does.
    static func environment(of request: Request) throws -> SimulatedEnvironment {
        let named = request.uri.queryParameters["environment"].map(String.init)
        return try named.map { try ControlAPI.environment($0) } ?? .sandbox
    }
}
