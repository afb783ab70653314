import Foundation
import Hummingbird
import NIOCore

/// The control API: drives the simulated devices, clock and failures over HTTP.
/// Routes are listed in `AppleSimulatorServer`'s documentation.
struct ControlRoutes {
    let simulator: AppleSimulator

    func register(on router: Router<BasicRequestContext>) {
        let control = router.group("control")
        control.get("clock") { _, _ in try HTTPReplies.json(ControlAPI.Clock(nowMs: simulator.nowMilliseconds)) }
        control.post("clock/advance") { request, _ in
            try await handle {
                let body = try await HTTPReplies.decode(ControlAPI.AdvanceRequest.self, from: request)
                let milliseconds = Int64(body.days ?? 0) * 86_400_000 + (body.seconds ?? 0) * 1000
                try await simulator.advance(by: .milliseconds(milliseconds))
                return try HTTPReplies.json(ControlAPI.Clock(nowMs: simulator.nowMilliseconds))
            }
        }
        control.post("purchases") { request, _ in
            try await handle {
                let body = try await HTTPReplies.decode(ControlAPI.PurchaseRequest.self, from: request)
                let result = try await simulator.purchase(
                    appleId: body.appleId, productId: body.productId,
                    environment: try body.environment.map(ControlAPI.environment) ?? .sandbox,
                    quantity: body.quantity ?? 1, appAccountToken: body.appAccountToken, bundleId: body.bundleId,
                    storefront: body.storefront, offer: try body.offer())
                return try HTTPReplies.json(ControlAPI.PurchaseResponse(result), status: .created)
            }
        }
        control.get("transactions/:id") { _, context in
            try await handle { try HTTPReplies.json(simulator.transaction(try context.parameters.require("id"))) }
        }
        control.get("transactions/:id/signed") { _, context in
            try await handle {
                let signed = try simulator.signedTransaction(try context.parameters.require("id"))
                return try HTTPReplies.json(["signed_transaction": signed])
            }
        }
        control.post("transactions/:id/finish") { _, context in
            try await handle {
                try simulator.finish(transactionId: try context.parameters.require("id"))
                return HTTPReplies.empty(.noContent)
            }
        }
        control.post("transactions/:id/refund") { request, context in
            try await handle {
                let body = try await HTTPReplies.decode(ControlAPI.RefundRequest.self, from: request)
                let refunded = try await simulator.refund(
                    transactionId: try context.parameters.require("id"), reason: body.reason ?? 0,
                    revocationPercentage: body.revocationPercentage)
                return try HTTPReplies.json(refunded)
            }
        }
        control.post("transactions/:id/revoke") { _, context in
            try await handle {
                let revoked = try await simulator.revoke(transactionId: try context.parameters.require("id"))
                return try HTTPReplies.json(revoked)
            }
        }
        control.post("transactions/:id/consumption-request") { request, context in
            try await handle {
                let body = try await HTTPReplies.decodeIfPresent(ControlAPI.ConsumptionRequest.self, from: request)
                let id = try context.parameters.require("id")
                if let reason = body?.reason {
                    try await simulator.requestConsumption(transactionId: id, reason: reason)
                } else {
                    try await simulator.requestConsumption(transactionId: id)
                }
                return HTTPReplies.empty(.accepted)
            }
        }
        registerSubscriptions(on: control)
        registerAccounts(on: control)
        registerFailures(on: control)
        registerNotifications(on: control)
        registerServerAPI(on: control)
        registerReports(on: control)
    }

    private func registerSubscriptions(on control: RouterGroup<BasicRequestContext>) {
        control.get("subscriptions/:id") { _, context in
            try await handle { try HTTPReplies.json(simulator.subscription(try context.parameters.require("id"))) }
        }
        control.post("subscriptions/:id/auto-renew") { request, context in
            try await handle {
                let body = try await HTTPReplies.decode(ControlAPI.AutoRenewRequest.self, from: request)
                let id = try context.parameters.require("id")
                try await simulator.setAutoRenew(originalTransactionId: id, enabled: body.enabled)
                return try HTTPReplies.json(simulator.subscription(id))
            }
        }
        control.post("subscriptions/:id/product") { request, context in
            try await handle {
                let body = try await HTTPReplies.decode(ControlAPI.ChangeProductRequest.self, from: request)
                let id = try context.parameters.require("id")
                if let upgrade = try await simulator.changeProduct(originalTransactionId: id, to: body.productId) {
                    return try HTTPReplies.json(ControlAPI.PurchaseResponse(upgrade), status: .created)
                }
                return try HTTPReplies.json(simulator.subscription(id), status: .accepted)
            }
        }
        control.post("subscriptions/:id/billing") { request, context in
            try await handle {
                let body = try await HTTPReplies.decode(ControlAPI.BillingRequest.self, from: request)
                let id = try context.parameters.require("id")
                try await simulator.setBillingFails(originalTransactionId: id, body.fails)
                return try HTTPReplies.json(simulator.subscription(id))
            }
        }
    }

    private func registerAccounts(on control: RouterGroup<BasicRequestContext>) {
        control.get("accounts/:appleId/receipt") { _, context in
            try await handle {
                try HTTPReplies.json(["receipt_data": simulator.receiptData(of: try context.parameters.require("appleId"))])
            }
        }
        control.post("accounts/:appleId/receipt/refresh") { _, context in
            try await handle {
                try HTTPReplies.json(["receipt_data": simulator.refreshReceipt(appleId: try context.parameters.require("appleId"))])
            }
        }
        control.get("accounts/:appleId/transactions") { _, context in
            try await handle { try HTTPReplies.json(simulator.transactions(of: try context.parameters.require("appleId"))) }
        }
    }

    private func registerFailures(on control: RouterGroup<BasicRequestContext>) {
        control.get("failures") { _, _ in try HTTPReplies.json(simulator.failureRules) }
        control.post("failures") { request, _ in
            try await handle {
                let body = try await HTTPReplies.decode(ControlAPI.FailureRequest.self, from: request)
                simulator.injectFailure(try body.rule())
                return try HTTPReplies.json(simulator.failureRules, status: .created)
            }
        }
        control.delete("failures") { _, _ in
            simulator.clearFailures()
            return HTTPReplies.empty(.noContent)
        }
        control.get("stats") { _, _ in
            let calls = simulator.verifyReceiptCalls
            return try HTTPReplies.json([
                "production_calls": calls[.production] ?? 0, "sandbox_calls": calls[.sandbox] ?? 0,
            ])
        }
    }

    private func registerNotifications(on control: RouterGroup<BasicRequestContext>) {
        control.get("root-certificate") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/pkix-cert"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: simulator.rootCertificateDER)))
        }
        control.get("root-certificate.pem") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/x-pem-file"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: simulator.certificateAuthority.rootCertificatePEM)))
        }
        control.get("notifications") { _, _ in try HTTPReplies.json(simulator.sentNotifications) }
        control.post("notification-sink") { request, _ in
            simulator.recordSink(String(decoding: try await HTTPReplies.body(of: request), as: UTF8.self))
            return HTTPReplies.empty(.ok)
        }
        control.get("notification-sink") { _, _ in try HTTPReplies.json(simulator.sinkNotifications) }
    }

    /// Runs a control operation, answering its `SimulatorError` as JSON.
    func handle(_ body: () async throws -> Response) async throws -> Response {
        do {
            return try await body()
        } catch let error as SimulatorError {
            return HTTPReplies.error(error)
        }
    }
}
