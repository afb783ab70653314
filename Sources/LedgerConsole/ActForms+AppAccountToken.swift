import Foundation
import Hummingbird
import Ledger
import LedgerQueries
import LedgerService
import LedgerStore
import Logging

extension ActForms {
    /// Apple's Set App Account Token on an owned purchase: validated as the API's
    /// `PUT /v1/transactions/{id}/app-account-token`, Apple's rules and the token's user checked
    /// before the confirmation, then asked; the reason is recorded in the act.
    func attach(_ form: AppAccountTokenForm, session: ConsoleSession, metadata: RequestMetadata) async throws -> Response {
        let original = try ActInput.identifier(form.original, "The original transaction id")
        guard let token = form.token.flatMap({ UUID(uuidString: $0.trimmingCharacters(in: .whitespaces)) }) else {
            throw ConsoleError.badRequest("The app account token is a UUID (8-4-4-4-12 hex digits), as the ledger issued it with an order.")
        }
        let tokenText = token.uuidString.lowercased()
        let reason = try ActInput.line(form.reason, "A reason")
        try requireServerAPI()
        // Apple's rules and the token's owner, checked before anything is asked or confirmed.
        guard let owned = try await console.service.reads.ownedPurchase(original) else {
            throw ConsoleError.notFound("The ledger holds no owned purchase whose original transaction is \(original).")
        }
        guard !owned.familyShared else {
            throw ConsoleError(
                status: .unprocessableContent, message: "\(original) is a Family Sharing member's: Apple lets no app account token be set on it.",
                title: "Apple would refuse")
        }
        // Orders record the token as a handle for a sealed person (docs/erasure.md).
        let recordedToken = try await console.service.people.recordedTokens([tokenText])[tokenText] ?? tokenText
        guard let user = try await console.service.reads.userOfAppAccountToken(recordedToken) else {
            throw ConsoleError(
                status: .unprocessableContent, message: "The ledger never issued the app account token \(tokenText) with an order.",
                title: "Unknown app account token")
        }
        let back = ConsoleLinks.lookup(original, as: TimelineView.Kind.transaction.rawValue)
        let holder = owned.ownerUserId
        let effect: String
        var warning: String?
        if holder == user {
            effect = "It is \(user)'s already: Apple will hold the token, ownership stays."
        } else if console.service.configuration.transferPolicy == .transfer {
            effect = "The purchase moves from \(holder) to \(user) (transfer policy)."
        } else {
            effect = "\(holder) keeps it."
            warning = "The transfer policy is keep: the ledger will refuse to move \(holder)'s purchase to \(user), without asking Apple, "
                + "and record the refusal."
        }
        let facts: [(String, String)] = [
            ("Original transaction", original), ("Product", owned.productId), ("Environment", owned.environment), ("Held by", holder),
            ("App account token", tokenText), ("Issued to user", user), ("Reason", reason), ("Then", effect),
        ]
        guard form.confirm == "1" else {
            return confirmation(
                session, title: "Confirm: attach an app account token", action: "/console/acts/app-account-token",
                question: "Attach app account token \(tokenText) (user \(user)'s) to original transaction \(original) with Apple?",
                facts: facts, warning: warning,
                recorded: "Whatever comes of it is recorded, with your token's name and the reason.",
                fields: [("original_transaction_id", original), ("app_account_token", tokenText), ("reason", reason)],
                button: "Ask Apple to attach the token", back: back)
        }
        let logged: Logger.Metadata = ["original_transaction_id": .string(original), "user_id": .string(user), "reason": .string(reason)]
        do {
            let set = try await console.service.setAppAccountToken(originalTransactionId: original, token: token, reason: reason, metadata: metadata)
            log("app_account_token", outcome: "set", session, metadata, logged)
            return result(
                session, title: "App account token attached", done: true,
                outcome: "Apple holds app account token \(set.appAccountToken) on \(original); the purchase is \(set.userId)'s.",
                facts: facts, original: original, back: back, status: .ok)
        } catch let error as LedgerServiceError where [.ownedByAnotherUser, .appleRefused, .familyShared, .unknownAppAccountToken].contains(error.code) {
            log("app_account_token", outcome: error.code.rawValue, session, metadata, logged)
            let recorded = [.ownedByAnotherUser, .appleRefused].contains(error.code) ? " The refusal is recorded." : ""
            return result(
                session, title: "Token not attached", done: false, outcome: Self.sentence(error.message) + recorded, facts: facts,
                original: original, back: back, status: .unprocessableContent)
        }
    }
}
