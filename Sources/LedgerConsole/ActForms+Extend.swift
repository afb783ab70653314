import Foundation
import Hummingbird
import Ledger
import LedgerQueries
import LedgerService
import LedgerStore
import Logging

extension ActForms {
    /// Apple's Extend a Subscription Renewal Date for one subscription: validated as the API's
    /// `POST /v1/subscriptions/{id}/extend`, confirmed, then asked once per request id (made
    /// on the confirmation page). The note is required, recorded in the event and logged.
    func extend(_ form: ExtendForm, session: ConsoleSession, metadata: RequestMetadata) async throws -> Response {
        let original = try ActInput.identifier(form.original, "The original transaction id")
        guard let days = form.days.flatMap({ Int64($0.trimmingCharacters(in: .whitespaces)) }), (1...90).contains(days) else {
            throw ConsoleError.badRequest("Days is a whole number from 1 to 90 (Apple's limit).")
        }
        guard let reason = form.reason.flatMap(ExtensionReason.init(rawValue:)) else {
            throw ConsoleError.badRequest("The reason is one of \(ExtensionReason.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        let note = try ActInput.line(form.note, "A note saying why")
        try requireServerAPI()
        guard let subscription = try await console.service.reads.subscriptionToAct(original) else {
            throw ConsoleError.notFound("The ledger holds no subscription \(original).")
        }
        let back = ConsoleLinks.lookup(original, as: TimelineView.Kind.transaction.rawValue)
        let question = "Extend subscription \(original) by \(days) day\(days == 1 ? "" : "s") for reason \(reason.rawValue)?"
        let asked: [(String, String)] = [
            ("Subscription", original), ("Product", subscription.productId), ("Environment", subscription.environment),
            ("Held by", subscription.ownerUserId ?? "nobody"), ("Renews or expires", subscription.expiresAtMs.map(RevenueDay.iso8601) ?? "unknown"),
            ("Days", String(days)), ("Reason", "\(reason.rawValue) (Apple's code \(reason.appleCode))"), ("Note", note),
        ]
        guard form.confirm == "1" else {
            // The request id is made here, once: a confirmation sent twice asks Apple once.
            let requestId = UUID().uuidString.lowercased()
            return confirmation(
                session, title: "Confirm: extend a renewal date", action: "/console/acts/extend", question: question,
                facts: asked + [("Request id", requestId)], warning: nil,
                recorded: "Apple allows 1 to 90 days, and two extensions of a subscription in 365 days. Whatever Apple answers is recorded, "
                    + "with your token's name and your note.",
                fields: [("original_transaction_id", original), ("days", String(days)), ("reason", reason.rawValue), ("note", note), ("request_id", requestId)],
                button: "Ask Apple to extend by \(days) day\(days == 1 ? "" : "s")", back: back)
        }
        guard let requestId = form.requestId.flatMap(UUID.init(uuidString:))?.uuidString.lowercased() else {
            throw ConsoleError.badRequest("The confirmation carries no request id; start again from the look-up page.")
        }
        let facts = asked + [("Request id", requestId)]
        let logged: Logger.Metadata = [
            "original_transaction_id": .string(original), "days": .stringConvertible(days), "reason": .string(reason.rawValue), "note": .string(note),
            "act_request_id": .string(requestId),
        ]
        do {
            let extended = try await console.service.extendRenewal(
                originalTransactionId: original, days: days, reason: reason, requestId: requestId, note: note, metadata: metadata)
            let effective = extended.effectiveDateMs.map(RevenueDay.iso8601) ?? "unknown"
            log("extend", outcome: "extended", session, metadata, logged)
            let now = try await readsAfterAct.subscription(original)?.expiresAt ?? "unknown"
            return result(
                session, title: "Renewal date extended", done: true,
                outcome: "Apple extended subscription \(original) by \(days) day\(days == 1 ? "" : "s"): it now renews on \(effective).",
                facts: facts + [("Apple's new renewal date", effective), ("Expires in the ledger", now)], original: original, back: back, status: .ok)
        } catch let error as LedgerServiceError where error.code == .extensionRefused {
            log("extend", outcome: "refused", session, metadata, logged)
            return result(
                session, title: "Extension refused", done: false, outcome: Self.sentence(error.message) + " The refusal is recorded.", facts: facts,
                original: original, back: back, status: .unprocessableContent)
        }
    }
}
