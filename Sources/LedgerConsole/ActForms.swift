import AppStore
import Foundation
import HTTPTypes
import Hummingbird
import Ledger
import LedgerQueries
import LedgerService
import LedgerStore
import Logging

/// Support's acts from the look-up page (issue 26): extending one subscription's renewal date
/// (Apple's Extend a Subscription Renewal Date) and attaching a user's app account token to a
/// purchase (Set App Account Token). Each is a form with the session's CSRF token and a reason.
/// Its first POST only shows a confirmation page restating what will be asked of Apple; only
/// the confirmed POST (the same fields and `confirm=1`) acts, as `console:<token name>`, and
/// shows what came of it. Finance sees no such forms; its POSTs answer 403 before being read.
struct ActForms: Sendable {
    let console: Console

    func register<Context: ConsoleRequestContext>(on router: Router<Context>, routes: ConsoleRoutes<Context>) {
        router.post("console/acts/extend") { request, context in
            await routes.guardedForm(.lookup, request, context, form: ExtendForm.self, acting: true) { session, form in
                try await extend(form, session: session, metadata: Self.metadata(session, context))
            }
        }
        router.post("console/acts/app-account-token") { request, context in
            await routes.guardedForm(.lookup, request, context, form: AppAccountTokenForm.self, acting: true) { session, form in
                try await attach(form, session: session, metadata: Self.metadata(session, context))
            }
        }
    }

    /// The act's actor, as the Apple order look-up records it.
    static func metadata(_ session: ConsoleSession, _ context: some ConsoleRequestContext) -> RequestMetadata {
        RequestMetadata(requestId: context.requestID, actor: "console:\(session.tokenName)", clientAddress: context.clientAddress)
    }

    /// The look-up's forms for a transaction's page, for a session that may act: on the original
    /// transaction the page shows (the subject itself, or the original of the period it names),
    /// when the ledger holds it as an owned purchase. Nil: no forms.
    func offer(for timeline: TimelineView, session: ConsoleSession) async throws -> [String: Any]? {
        guard session.role.mayAct, timeline.kind == .transaction, let owned = try await ownedPurchase(shownBy: timeline) else { return nil }
        let original = owned.originalTransactionId
        var acts: [String: Any] = [
            "originalTransactionId": original, "csrf": session.csrfToken, "configured": console.service.serverAPI != nil,
            "owner": owned.ownerUserId, "familyShared": owned.familyShared,
        ]
        if let subscription = try await console.reads.subscription(original) {
            acts["extend"] = [
                "productId": subscription.productId, "status": subscription.status, "expiresAt": subscription.expiresAt ?? "unknown",
                "reasons": ExtensionReason.allCases.map { ["value": $0.rawValue, "label": Self.label($0)] },
            ] as [String: Any]
        }
        return acts
    }

    private func ownedPurchase(shownBy timeline: TimelineView) async throws -> OwnedPurchase? {
        var candidates = [timeline.subject]
        for entry in timeline.entries {
            guard entry.transactionId == timeline.subject, let original = entry.originalTransactionId, !candidates.contains(original) else { continue }
            candidates.append(original)
        }
        for candidate in candidates.prefix(3) {
            if let owned = try await console.service.reads.ownedPurchase(candidate) { return owned }
        }
        return nil
    }

    // MARK: - Pages

    func requireServerAPI() throws {
        guard console.service.serverAPI != nil else {
            throw ConsoleError(
                status: .serviceUnavailable, message: "The ledger has no App Store Server API credentials to ask Apple with.",
                title: "Apple cannot be asked")
        }
    }

    /// The page between a form and its act: what will be asked of Apple, and a button sending
    /// the same fields again with `confirm=1`.
    func confirmation(
        _ session: ConsoleSession, title: String, action: String, question: String, facts: [(String, String)], warning: String?,
        recorded: String, fields: [(String, String)], button: String, back: String
    ) -> Response {
        var values: [String: Any] = [
            "actionHref": action, "question": question, "facts": Self.rows(facts), "recorded": recorded, "csrf": session.csrfToken,
            "fields": fields.map { ["name": $0.0, "value": $0.1] }, "button": button, "backHref": back,
        ]
        if let warning { values["warning"] = warning }
        return console.renderer.page("act-confirm", title: title, area: .lookup, session: session, values: values)
    }

    func result(
        _ session: ConsoleSession, title: String, done: Bool, outcome: String, facts: [(String, String)], original: String, back: String,
        status: HTTPResponse.Status
    ) -> Response {
        // Back to the look-up once it holds what the act recorded, and no more than that.
        let back = RecordedPosition.current?.position.map {
            ConsoleLinks.lookup(original, as: TimelineView.Kind.transaction.rawValue, after: $0)
        } ?? back
        return console.renderer.page("act-result", title: title, area: .lookup, session: session, values: [
            "done": done, "outcome": outcome, "facts": Self.rows(facts), "original": original, "backHref": back,
        ], status: status)
    }

    /// The read models once they hold what this request recorded (its act), else at the head.
    var readsAfterAct: ReadModels {
        console.reads.reading(RecordedPosition.current?.position.map(ReadFreshness.position) ?? .head)
    }

    /// `text` ending with a full stop (Apple's messages have one, the ledger's do not).
    static func sentence(_ text: String) -> String { text.hasSuffix(".") ? text : text + "." }

    static func rows(_ facts: [(String, String)]) -> [[String: Any]] { facts.map { ["label": $0.0, "value": $0.1] } }

    /// Every act in the log, with who asked (the token's name) and the note the event has no field for yet.
    func log(_ act: String, outcome: String, _ session: ConsoleSession, _ metadata: RequestMetadata, _ details: Logger.Metadata) {
        var all: Logger.Metadata = [
            "act": .string(act), "outcome": .string(outcome), "request_id": .string(metadata.requestId ?? ""), "token": .string(session.tokenName),
        ]
        all.merge(details) { _, detail in detail }
        console.logger.info("console act", metadata: all)
    }

    static func label(_ reason: ExtensionReason) -> String {
        switch reason {
        case .customerSatisfaction: "Customer satisfaction"
        case .other: "Other"
        case .serviceIssue: "Service issue"
        }
    }
}
