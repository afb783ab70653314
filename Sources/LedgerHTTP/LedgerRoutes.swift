import Foundation
import HTTPTypes
import Hummingbird
import Ledger
import LedgerQueries
import LedgerService
import LedgerStore

/// The routes of docs/http-api.md's HTTP API.
struct LedgerRoutes: Sendable {
    let service: PurchaseService
    let reads: ReadModels
    let authenticator: Authenticator
    let health: HealthCheck
    let metrics: LedgerMetrics

    func register(on router: Router<LedgerRequestContext>) {
        router.post("v1/orders") { request, context in try await createOrder(request, context) }
        router.post("v1/receipts") { request, context in try await submitReceipt(request, context) }
        router.post("v1/transactions") { request, context in try await submitTransaction(request, context) }
        router.post("v1/notifications/apple") { request, context in try await notification(request, context) }
        router.get("v1/users/:user_id") { request, context in try await user(request, context) }
        router.delete("v1/users/:user_id") { request, context in try await erase(request, context) }
        router.post("v1/users/:user_id/spend") { request, context in try await spend(request, context) }
        router.post("v1/subscriptions/:original_transaction_id/extend") { request, context in try await extend(request, context) }
        router.put("v1/transactions/:original_transaction_id/app-account-token") { request, context in try await setAppAccountToken(request, context) }
        router.post("v1/offers/signatures") { request, context in try await signOffer(request, context) }
        router.post("v1/users/:user_id/consent") { request, context in try await consent(request, context) }
        router.post("v1/users/:user_id/restore") { request, context in try await restore(request, context) }
        router.get("v1/subscriptions/:original_transaction_id") { request, context in try await subscription(request, context) }
        router.get("v1/ownership/:original_transaction_id") { request, context in try await ownership(request, context) }
        router.get("v1/apple-accounts/:apple_account") { request, context in try await appleAccount(request, context) }
        for kind in TimelineView.Kind.allCases {
            router.get("v1/timelines/\(kind.rawValue)s/:id") { request, context in try await timeline(kind, request, context) }
        }
        router.get("v1/reports/revenue") { request, context in try await revenue(request, context) }
        router.get("v1/reports/subscriptions") { request, context in try await subscriptionsReport(request, context) }
        router.get("v1/reports/cohorts") { request, context in try await cohortsReport(request, context) }
        router.get("v1/reports/refunds") { request, context in try await refundsReport(request, context) }
        router.get("v1/apple-orders/:order_id") { request, context in try await appleOrder(request, context) }
        router.get("v1/events") { request, context in try await events(request, context) }
        router.get("healthz") { _, _ in try await health.response() }
        router.get("metrics") { _, _ in
            await health.refreshGauges(metrics)
            // The database's and the webhook endpoints' series are read from the database now
            // (DatabaseMetrics, WebhookMetrics); when it does not answer they are left out but
            // `ledger_database_up 0`, and the rest of the scrape still is.
            let database = await DatabaseMetrics.scrape(health.pool, grace: health.worker.orphanGrace)
            let webhooks = await WebhookMetrics.scrape(health.pool, clock: service.clock)
            var exposition = metrics.exposition()
            if !exposition.isEmpty, !exposition.hasSuffix("\n") { exposition += "\n" }
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: exposition + database + webhooks)))
        }
        router.get("openapi.yaml") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: try OpenAPIDocument.bytes())))
        }
    }

    /// The read models as fresh as the request's `X-Ledger-After` asks (the head without it).
    func reads(for request: Request) throws -> ReadModels {
        guard let freshness = ReadFreshness(header: request.headers[.xLedgerAfter]) else {
            throw APIError.invalidRequest("X-Ledger-After must be a position (a whole number, 0 for no wait)")
        }
        return reads.reading(freshness)
    }

    private func metadata(_ request: Request, _ context: LedgerRequestContext) -> RequestMetadata {
        RequestMetadata(requestId: context.requestID, actor: context.actor)
    }

    /// What the log records for a user id the app sent (docs/erasure.md): its subject's handle,
    /// sealed under that person's own key, so erasing them later leaves nothing readable behind;
    /// an id the log already holds in clear (recorded before erasure came) stays as it is.
    private func person(_ userId: String) async throws -> String {
        try await service.people.handle(forUser: userId)
    }

    /// The request's `Idempotency-Key`, scoped to the caller and `route`; nil when absent.
    private func idempotencyKey(_ request: Request, _ context: LedgerRequestContext, route: String) throws -> IdempotencyKey? {
        guard let text = request.headers[HTTPField.Name("Idempotency-Key")!] else { return nil }
        guard let key = IdempotencyKey(text, caller: context.actor, route: route) else {
            throw APIError.invalidRequest("Idempotency-Key must be 1 to 255 visible ASCII characters")
        }
        return key
    }

    private func createOrder(_ request: Request, _ context: LedgerRequestContext) async throws -> Response {
        let context = try authenticator.require([.app], request, context, perApp: true)
        let body = try await APIBodies.decode(APIBodies.CreateOrder.self, from: request)
        let user = try await person(try APIBodies.identifier(body.userId, "user_id"))
        let product = try APIBodies.identifier(body.productId, "product_id")
        let quantity = body.quantity ?? 1
        guard (1...1_000).contains(quantity) else { throw APIError.invalidRequest("quantity must be from 1 to 1000") }
        let order = try await service.createOrder(
            userId: user, productId: product, quantity: quantity, bundleId: try app(for: context, named: body.bundleId),
            idempotencyKey: try idempotencyKey(request, context, route: "orders"), metadata: metadata(request, context))
        return try JSONResponse.make(APIAnswers.Order(order: order), status: .created)
    }

    private func submitReceipt(_ request: Request, _ context: LedgerRequestContext) async throws -> Response {
        let context = try authenticator.require([.app], request, context, perApp: true)
        let body = try await APIBodies.decode(APIBodies.SubmitReceipt.self, from: request)
        let user = try await person(try APIBodies.identifier(body.userId, "user_id"))
        let transaction = try body.transactionId.map { try APIBodies.identifier($0, "transaction_id") }
        let order = try body.orderId.map { try APIBodies.identifier($0, "order_id") }
        guard !body.receiptData.isEmpty, Data(base64Encoded: body.receiptData) != nil else {
            throw APIError.invalidRequest("receipt_data must be the base64 receipt the app read from its bundle")
        }
        let outcome = try await service.submitReceipt(
            userId: user, receiptData: body.receiptData, transactionId: transaction, orderId: order, appLimit: context.app,
            idempotencyKey: try idempotencyKey(request, context, route: "receipts"), metadata: metadata(request, context))
        record(outcome)
        return try APIAnswers.response(for: outcome)
    }

    private func submitTransaction(_ request: Request, _ context: LedgerRequestContext) async throws -> Response {
        let context = try authenticator.require([.app], request, context, perApp: true)
        let body = try await APIBodies.decode(APIBodies.SubmitTransaction.self, from: request)
        let user = try await person(try APIBodies.identifier(body.userId, "user_id"))
        let order = try body.orderId.map { try APIBodies.identifier($0, "order_id") }
        try APIBodies.requireCompactJWS(body.signedTransaction)
        let outcome = try await service.submitSignedTransaction(
            userId: user, signedTransaction: body.signedTransaction, orderId: order, appLimit: context.app,
            idempotencyKey: try idempotencyKey(request, context, route: "transactions"), metadata: metadata(request, context))
        record(outcome)
        return try APIAnswers.response(for: outcome)
    }

    private func notification(_ request: Request, _ context: LedgerRequestContext) async throws -> Response {
        let buffer = try await request.body.collect(upTo: APILimits.maximumBodyBytes)
        let outcome = try await service.receiveNotification(
            body: Data(buffer: buffer), metadata: RequestMetadata(requestId: context.requestID, actor: "apple"))
        struct Answer: Encodable { var status: String; var notificationId: String }
        switch outcome {
        case .recorded(let id): return try JSONResponse.make(Answer(status: "recorded", notificationId: id))
        case .duplicate(let id): return try JSONResponse.make(Answer(status: "duplicate", notificationId: id))
        }
    }

    /// Support's goodwill: Apple's Extend a Subscription Renewal Date, recorded as an act.
    private func extend(_ request: Request, _ context: LedgerRequestContext) async throws -> Response {
        let context = try authenticator.require([.support], request, context, perApp: true)
        let id = try APIBodies.pathIdentifier(try context.parameters.require("original_transaction_id"), "original_transaction_id")
        if let limit = context.app, try await reads(for: request).subscription(id)?.bundleId != limit {
            throw APIError(.notFound, "not_found", "the ledger holds no subscription \(id)")
        }
        let body = try await APIBodies.decode(APIBodies.Extend.self, from: request)
        guard (1...90).contains(body.days) else { throw APIError.invalidRequest("days is 1 to 90 (Apple's limit)") }
        guard let reason = ExtensionReason(rawValue: body.reason) else {
            throw APIError.invalidRequest("reason is \(ExtensionReason.allCases.map(\.rawValue).joined(separator: ", ")), not \(body.reason)")
        }
        let requestId = try APIBodies.identifier(body.requestId, "request_id")
        if let note = body.note, note.count > 500 { throw APIError.invalidRequest("note must be at most 500 characters") }
        let extended = try await service.extendRenewal(
            originalTransactionId: id, days: body.days, reason: reason, requestId: requestId, note: body.note, metadata: metadata(request, context))
        // The subscription as the read models hold it now, the extension applied.
        let view = try await reads(for: request).subscription(id)
        return try JSONResponse.make(APIAnswers.Extended(
            originalTransactionId: id, effectiveDate: extended.effectiveDateMs.map(RevenueDay.iso8601), newExpiresAt: view?.expiresAt))
    }

    /// Fixing attribution: Apple's Set App Account Token, and the purchase's owner with it.
    private func setAppAccountToken(_ request: Request, _ context: LedgerRequestContext) async throws -> Response {
        let context = try authenticator.require([.support, .app], request, context, perApp: true)
        let id = try APIBodies.pathIdentifier(try context.parameters.require("original_transaction_id"), "original_transaction_id")
        // Another app's purchase, to a token limited to one, is as if it did not exist.
        if let limit = context.app, try await reads(for: request).ownership(id)?.bundleId != limit {
            throw APIError(.notFound, "not_found", "the ledger holds no purchase \(id)")
        }
        let body = try await APIBodies.decode(APIBodies.AppAccountToken.self, from: request)
        guard let token = UUID(uuidString: body.appAccountToken) else {
            throw APIError.invalidRequest("app_account_token must be a UUID")
        }
        if let reason = body.reason, reason.count > 500 { throw APIError.invalidRequest("reason must be at most 500 characters") }
        let set = try await service.setAppAccountToken(originalTransactionId: id, token: token, reason: body.reason, metadata: metadata(request, context))
        return try JSONResponse.make(APIAnswers.AppAccountTokenSet(
            originalTransactionId: id, appAccountToken: set.appAccountToken, ownerUserId: set.userId))
    }

    /// The app's server signs an offer for StoreKit; the ledger records who was offered what.
    private func signOffer(_ request: Request, _ context: LedgerRequestContext) async throws -> Response {
        let context = try authenticator.require([.app], request, context, perApp: true)
        let body = try await APIBodies.decode(APIBodies.OfferSignature.self, from: request)
        guard let kind = OfferSignatureKind(rawValue: body.kind) else {
            throw APIError.invalidRequest("kind is \(OfferSignatureKind.allCases.map(\.rawValue).joined(separator: ", ")), not \(body.kind)")
        }
        let offer = OfferSignatureRequest(
            userId: try await person(try APIBodies.identifier(body.userId, "user_id")), productId: try APIBodies.identifier(body.productId, "product_id"), kind: kind,
            offerId: try body.offerId.map { try APIBodies.identifier($0, "offer_id") },
            transactionId: try body.transactionId.map { try APIBodies.identifier($0, "transaction_id") },
            allowIntroductoryOffer: body.allowIntroductoryOffer, bundleId: try app(for: context, named: body.bundleId))
        let issued = try await service.issueOfferSignature(
            offer, idempotencyKey: try idempotencyKey(request, context, route: "offers"), metadata: metadata(request, context))
        return try JSONResponse.make(APIAnswers.OfferSignature(
            signature: issued.signature, keyId: issued.event.keyId, nonce: issued.event.nonce, timestamp: issued.event.timestampMs,
            appAccountToken: issued.event.appAccountToken, expiresAt: issued.event.expiresAtMs.map(RevenueDay.iso8601)), status: .created)
    }

    private func spend(_ request: Request, _ context: LedgerRequestContext) async throws -> Response {
        let context = try authenticator.require([.app], request, context, perApp: true)
        let user = try await person(try APIBodies.pathIdentifier(try context.parameters.require("user_id"), "user_id"))
        let body = try await APIBodies.decode(APIBodies.Spend.self, from: request)
        let unit = try APIBodies.identifier(body.unit, "unit")
        let spendId = try APIBodies.identifier(body.spendId, "spend_id")
        guard (1...1_000_000_000_000).contains(body.amount) else { throw APIError.invalidRequest("amount must be a whole number from 1 to 10^12") }
        if let reason = body.reason, reason.count > 500 { throw APIError.invalidRequest("reason must be at most 500 characters") }
        // The app's words about the person are theirs: sealed with their id (docs/erasure.md).
        var reason: String?
        if let text = body.reason { reason = try await service.people.seal(text: text, aboutPersonOf: user) }
        let spent = try await service.spend(
            userId: user, unit: unit, amount: body.amount, spendId: spendId, reason: reason,
            bundleId: try app(for: context, named: body.bundleId), metadata: metadata(request, context))
        return try JSONResponse.make(APIAnswers.Spent(spent))
    }

    private func restore(_ request: Request, _ context: LedgerRequestContext) async throws -> Response {
        let context = try authenticator.require([.app], request, context, perApp: true)
        let user = try await person(try APIBodies.pathIdentifier(try context.parameters.require("user_id"), "user_id"))
        let body = try await APIBodies.decode(APIBodies.Restore.self, from: request)
        let proof: String
        switch (body.signedTransaction, body.transactionId) {
        case (let jws?, nil):
            try APIBodies.requireCompactJWS(jws)
            proof = jws
        case (nil, let id?):
            let id = try APIBodies.identifier(id, "transaction_id")
            guard !id.contains(".") else { throw APIError.invalidRequest("transaction_id is Apple's id, not a signed transaction") }
            proof = id
        default:
            throw APIError.invalidRequest("send one of signed_transaction and transaction_id")
        }
        let outcome = try await service.restoreThroughApple(
            userId: user, proof: proof, appLimit: context.app, idempotencyKey: try idempotencyKey(request, context, route: "restore"), metadata: metadata(request, context))
        record(outcome)
        return try APIAnswers.response(for: outcome)
    }

    private func consent(_ request: Request, _ context: LedgerRequestContext) async throws -> Response {
        let context = try authenticator.require([.app], request, context, perApp: true)
        let user = try await person(try APIBodies.pathIdentifier(try context.parameters.require("user_id"), "user_id"))
        let body = try await APIBodies.decode(APIBodies.Consent.self, from: request)
        let recorded = try await service.recordConsent(
            userId: user, consumptionData: body.consumptionData, bundleId: try app(for: context, named: body.bundleId),
            metadata: metadata(request, context))
        return try JSONResponse.make(APIAnswers.Consent(consent: recorded))
    }

    /// Forgets a person (docs/erasure.md): support's, once per `request_id`.
    private func erase(_ request: Request, _ context: LedgerRequestContext) async throws -> Response {
        let context = try authenticator.require([.support], request, context)
        let id = try APIBodies.pathIdentifier(try context.parameters.require("user_id"), "user_id")
        let body = try await APIBodies.decode(APIBodies.Erase.self, from: request)
        let erased = try await service.eraseUser(id, reason: body.reason, requestId: body.requestId, metadata: metadata(request, context))
        return try JSONResponse.make(APIAnswers.Erased(erased))
    }

    private func user(_ request: Request, _ context: LedgerRequestContext) async throws -> Response {
        let context = try authenticator.require([.app, .finance, .support], request, context, perApp: true)
        let id = try APIBodies.pathIdentifier(try context.parameters.require("user_id"), "user_id")
        // Read models hold the handle the log records for the id (docs/erasure.md); an id with
        // none is read as it is when the log holds it in clear (recorded before erasure came).
        // Any other is no one: erased, or never seen, which erasure forbids telling apart.
        let handle = try await service.people.knownHandle(forUser: id)
        var view = try await reads(for: request).user(handle ?? id)
        if handle == nil, try await !service.people.recordedInClear(id) {
            throw APIError(.notFound, "not_found", "the ledger holds no user \(id)")
        }
        // A token limited to one app sees that app's balances and entitlements alone.
        if let limit = context.app {
            view.balances.removeAll { $0.bundleId != limit }
            view.entitlements.removeAll { $0.bundleId != limit }
        }
        return try JSONResponse.make(APIAnswers.User(view: view, scope: try appInScope(request, context)))
    }

    /// The app a read is about (docs/http-api.md): a limited token's, else the `bundle_id`
    /// parameter, else the only app served; nil when several are served and none is named.
    private func appInScope(_ request: Request, _ context: LedgerRequestContext) throws -> String? {
        let apps = service.configuration.apps
        guard let named = try servedApp(named: try app(for: context, named: request.uri.queryParameters.get("bundle_id"))) else {
            return apps.isSeveral ? nil : apps.first.bundleId
        }
        return named
    }

    /// The app a call acts in or reads: a limited token's (naming another: 403
    /// `app_not_allowed`), else `named` (nil: none named).
    func app(for context: LedgerRequestContext, named: String?) throws -> String? {
        guard let limit = context.app else { return named }
        if let named, named != limit {
            throw APIError(.forbidden, "app_not_allowed", "this token is limited to \(limit), not \(named)")
        }
        return limit
    }

    /// `named` when it is an app this ledger serves (400 `invalid_request` otherwise); nil for nil.
    func servedApp(named: String?) throws -> String? { try service.configuration.apps.served(named) }

    private func subscription(_ request: Request, _ context: LedgerRequestContext) async throws -> Response {
        let context = try authenticator.require([.app, .finance], request, context, perApp: true)
        let id = try APIBodies.pathIdentifier(try context.parameters.require("original_transaction_id"), "original_transaction_id")
        // Another app's, to a token limited to one, is as if it did not exist.
        guard let view = try await reads(for: request).subscription(id), context.app.map({ $0 == view.bundleId }) ?? true else {
            throw APIError(.notFound, "not_found", "the ledger holds no subscription \(id)")
        }
        return try JSONResponse.make(APIAnswers.Subscription(view: view))
    }

    private func ownership(_ request: Request, _ context: LedgerRequestContext) async throws -> Response {
        let context = try authenticator.require([.app, .finance], request, context, perApp: true)
        let id = try APIBodies.pathIdentifier(try context.parameters.require("original_transaction_id"), "original_transaction_id")
        guard let view = try await reads(for: request).ownership(id), context.app.map({ $0 == view.bundleId }) ?? true else {
            throw APIError(.notFound, "not_found", "the ledger holds no purchase \(id)")
        }
        return try JSONResponse.make(APIAnswers.Ownership(view: view))
    }

    private func appleAccount(_ request: Request, _ context: LedgerRequestContext) async throws -> Response {
        _ = try authenticator.require([.finance], request, context)
        let name = try APIBodies.pathIdentifier(try context.parameters.require("apple_account"), "apple_account")
        guard var view = try await reads(for: request).appleAccount(name) else {
            throw APIError(.notFound, "not_found", "the ledger has seen no Apple account \(name)")
        }
        // Sorted by the ids shown, not by the handles the read model holds (docs/erasure.md).
        let names = try await service.people.names(for: Set(view.users))
        view.users = view.users.map { names[$0] ?? $0 }.sorted()
        return try JSONResponse.make(APIAnswers.AppleAccount(view: view))
    }

    private func timeline(_ kind: TimelineView.Kind, _ request: Request, _ context: LedgerRequestContext) async throws -> Response {
        // A person's timeline spans their apps: a token limited to one app reads a purchase's
        // or an order's, of its app alone, and no person's.
        let context = try authenticator.require([.finance, .support], request, context, perApp: kind != .user)
        let id = try APIBodies.pathIdentifier(try context.parameters.require("id"), "id")
        let subject = kind == .user ? try await service.people.knownHandle(forUser: id) ?? id : id
        guard let view = try await reads(for: request).timeline(kind, subject) else {
            throw APIError(.notFound, "not_found", "nothing in the ledger concerns \(kind.rawValue) \(id)")
        }
        if let limit = context.app, view.appsNamed(legacyApp: try await service.reads.legacyApp()) != [limit] {
            throw APIError(.notFound, "not_found", "nothing in the ledger concerns \(kind.rawValue) \(id)")
        }
        return JSONResponse.bytes(view.jsonBytes)
    }

    private func appleOrder(_ request: Request, _ context: LedgerRequestContext) async throws -> Response {
        let context = try authenticator.require([.finance, .support], request, context, perApp: true)
        let id = try APIBodies.pathIdentifier(try context.parameters.require("order_id"), "order_id")
        // A token limited to one app asks with that app's key alone: Apple answers its orders only.
        guard let view = try await service.lookUpAppleOrder(id, bundleId: context.app, metadata: metadata(request, context)) else {
            throw APIError(.notFound, "not_found", "Apple knows no order \(id)")
        }
        return try JSONResponse.make(APIAnswers.AppleOrder(view: view))
    }

    /// The feed: what webhooks tell, for consumers that pull (docs/webhooks.md `GET /v1/events`).
    private func events(_ request: Request, _ context: LedgerRequestContext) async throws -> Response {
        let context = try authenticator.require([.app, .finance], request, context, perApp: true)
        let parameters = request.uri.queryParameters
        func integer(_ name: String, default value: Int64, in range: ClosedRange<Int64>) throws -> Int64 {
            guard let text = parameters.get(name) else { return value }
            guard let number = Int64(text), range.contains(number) else {
                throw APIError.invalidRequest("\(name) is an integer from \(range.lowerBound) to \(range.upperBound), not \(text)")
            }
            return number
        }
        let after = try integer("after", default: 0, in: 0...Int64.max)
        let limit = try integer("limit", default: 100, in: 1...Int64(ReadModels.feedLimit))
        let wait = try integer("wait", default: 0, in: 0...ReadModels.feedWaitLimit.components.seconds)
        var afterHash: String?
        if let text = parameters.get("after_hash") {
            let hash = text.lowercased()
            guard (16...64).contains(hash.utf8.count), hash.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
                throw APIError.invalidRequest("after_hash is 16 to 64 hex digits of the chain hash at `after` (data.hash, or the id's middle part)")
            }
            afterHash = hash
        }
        let page: EventFeedPage
        do {
            // A token limited to one app reads that app's messages alone.
            var app: FeedApp?
            if let limit = context.app {
                app = FeedApp(bundleId: limit, isLegacy: limit == (try await service.reads.legacyApp() ?? limit))
            }
            page = try await reads.events(after: after, afterHash: afterHash, limit: Int(limit), wait: .seconds(wait), app: app)
        } catch let diverged as HistoryDiverged {
            return try JSONResponse.make(APIAnswers.HistoryDivergedBody(diverged), status: .conflict)
        }
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: page.json)))
    }

    private func revenue(_ request: Request, _ context: LedgerRequestContext) async throws -> Response {
        let context = try authenticator.require([.finance], request, context, perApp: true)
        let parameters = request.uri.queryParameters
        func value(_ name: String) -> String? { parameters.get(name) }
        guard let from = value("from"), let to = value("to") else {
            throw APIError.invalidRequest("from and to (YYYY-MM-DD) are required")
        }
        let groupText = value("group_by") ?? RevenueQuery.Grouping.day.rawValue
        guard let grouping = RevenueQuery.Grouping(rawValue: groupText) else {
            throw APIError.invalidRequest("group_by is \(RevenueQuery.Grouping.listed), not \(groupText)")
        }
        let app = try servedApp(named: try self.app(for: context, named: value("bundle_id")))
        let query: RevenueQuery
        do {
            query = try RevenueQuery(
                from: from, to: to, groupBy: grouping, environment: value("environment") ?? "Production",
                commission: service.configuration.commission, bundleId: app)
        } catch {
            throw APIError.invalidRequest(error.message)
        }
        return try JSONResponse.make(try await reads(for: request).revenue(query))
    }

    private func record(_ outcome: SubmissionOutcome) {
        metrics.recordOutcome(outcome.label)
        if case .delivered(let deliveries) = outcome { metrics.recordDeliveries(deliveries.count) }
    }
}

/// The OpenAPI document shipped with the server.
public enum OpenAPIDocument {
    public static func bytes() throws -> [UInt8] {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml") else {
            throw APIError(.internalServerError, "internal_error", "the OpenAPI document is missing from this build")
        }
        return Array(try Data(contentsOf: url))
    }
}
