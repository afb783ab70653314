import AppStore
import AppStoreClient
import EventStore
import Foundation
import Ledger
import LedgerStore
import Postgres

extension PurchaseService {
    /// `PUT /v1/transactions/{id}/app-account-token`: attaches a user's app account token (one
    /// the ledger issued with their order) to a purchase made before the app knew its user,
    /// with Apple (Set App Account Token), and attributes the purchase to that user.
    ///
    /// Apple's rules are checked before asking: an original transaction of an owned product the
    /// ledger recorded, never a Family Sharing member's. When another user holds it, the
    /// transfer policy decides: `transfer` moves it (an `OwnershipTransferred` beside the act,
    /// so ownership's history says why), `keep` refuses without asking Apple. Every outcome
    /// (set, refused by the policy, refused by Apple) is recorded as `AppAccountTokenSet`.
    ///
    /// A PUT, so idempotent: the same token again, while the purchase is still that user's,
    /// answers the act recorded first without asking Apple or recording another. Acts on one
    /// purchase take turns within a server and append expecting the version they read, so two
    /// servers cannot both record one; the loser decides again on what the winner recorded.
    public func setAppAccountToken(
        originalTransactionId: String, token: UUID, reason: String?, metadata: RequestMetadata
    ) async throws -> AppAccountTokenSet {
        let outcome = try await mappingDatabaseErrors { () -> AppAccountTokenSet in
            // As the log records it: the handle of a token issued to a sealed person.
            let plain = token.uuidString.lowercased()
            let tokenText = try await people.recordedTokens([plain])[plain] ?? plain
            return try await actTurns.run(Streams.appAccountToken(originalTransactionId)) {
                // Each lost race is another server's act on this purchase that committed.
                for _ in 1...16 {
                    if let decided = try await decideAppAccountToken(
                        originalTransactionId: originalTransactionId, token: token, tokenText: tokenText, reason: reason, metadata: metadata) {
                        return decided
                    }
                }
                throw LedgerServiceError(.busy, "\(originalTransactionId) keeps changing while its app account token is set; ask again")
            }
        }
        guard outcome.outcome == "set" else {
            if outcome.refusal == "owned_by_another_user" {
                throw LedgerServiceError(.ownedByAnotherUser, "\(originalTransactionId) belongs to user \(outcome.previousUserId ?? "?"), and the transfer policy keeps it")
            }
            throw LedgerServiceError(.appleRefused, "Apple refused to set the app account token: error \(outcome.refusal ?? "?")")
        }
        return outcome
    }

    /// One decision on what the log holds now; nil when another act or transfer of the purchase
    /// committed between reading and recording (Apple, if asked, holds the token already: asking
    /// again with the same token is harmless, and the act is recorded by the next decision).
    private func decideAppAccountToken(
        originalTransactionId: String, token: UUID, tokenText: String, reason: String?, metadata: RequestMetadata
    ) async throws -> AppAccountTokenSet? {
        guard let user = try await reads.userOfAppAccountToken(tokenText) else {
            throw LedgerServiceError(.unknownAppAccountToken, "the ledger never issued the app account token \(token.uuidString.lowercased()) with an order")
        }
        // Support's words about the person are theirs: sealed under their key.
        var sealedReason: String?
        if let reason { sealedReason = try await people.seal(text: reason, aboutPersonOf: user) }
        guard let owned = try await reads.ownedPurchase(originalTransactionId) else {
            throw LedgerServiceError(.notFound, "the ledger holds no owned purchase whose original transaction is \(originalTransactionId)")
        }
        guard !owned.familyShared else {
            throw LedgerServiceError(.familyShared, "\(originalTransactionId) is a Family Sharing member's: Apple lets no app account token be set on it")
        }
        let (last, version) = try await reads.lastAppAccountTokenAct(originalTransactionId)
        if let last, last.outcome == "set", last.appAccountToken == tokenText, owned.ownerUserId == user {
            return last
        }
        let tokenStream = Streams.appAccountToken(originalTransactionId)
        let expectation: LedgerAppend.Expectation = version == 0 ? .noStream : .exactly(version)
        func act(_ outcome: String, refusal: String?, request: String?, answer: String?) -> AppAccountTokenSet {
            AppAccountTokenSet(
                originalTransactionId: originalTransactionId, productId: owned.productId, environment: owned.environment,
                appAccountToken: tokenText, userId: user, previousUserId: owned.ownerUserId, outcome: outcome, refusal: refusal,
                reason: sealedReason, requestDocumentSha256: request, answerDocumentSha256: answer, atMs: clock())
        }
        func record(_ appends: [LedgerAppend], alongside: [SQL] = []) async throws -> Bool {
            do {
                try await log.append(appends, metadata: metadata, alongside: alongside)
                return true
            } catch EventStoreError.Code.wrongExpectedVersion {
                return false
            }
        }
        let moving = owned.ownerUserId != user
        if moving, configuration.transferPolicy == .keep {
            let refused = act("refused", refusal: "owned_by_another_user", request: nil, answer: nil)
            return try await record([LedgerAppend(stream: tokenStream, expectation: expectation, events: [.appAccountTokenSet(refused)])]) ? refused : nil
        }
        let client = try await requireServerAPI(for: owned.bundleId)
        guard let environment = AppStoreEnvironment(rawValue: owned.environment), environment == .production || environment == .sandbox else {
            throw LedgerServiceError(.invalidRequest, "Apple keeps app account tokens of Production and Sandbox purchases only, not \(owned.environment)")
        }
        let requestBody = Array(try JSONEncoder().encode(UpdateAppAccountTokenRequest(appAccountToken: token.uuidString.lowercased())))
        let seal = try await people.documentSeal(forUser: user)
        let requestDocument = DocumentStore.insert(requestBody, kind: "apple_app_account_token_request", sealedFor: seal)
        let asked: Result<ServerAPIAnswer<ServerAPIClient.Empty>, ServerAPIError>
        do throws(ServerAPIError) {
            asked = .success(try await client.setAppAccountToken(token, originalTransactionId: originalTransactionId, environment: environment))
        } catch {
            asked = .failure(error)
        }
        switch asked {
        case .success(let answer):
            let answerDocument = DocumentStore.insert(answer.body, kind: "apple_app_account_token_answer", sealedFor: seal)
            let set = act("set", refusal: nil, request: requestDocument.name, answer: answerDocument.name)
            var appends = [LedgerAppend(stream: tokenStream, expectation: expectation, events: [.appAccountTokenSet(set)])]
            if moving {
                appends.append(LedgerAppend(
                    stream: Streams.ownership(originalTransactionId), expectation: .exactly(owned.streamVersion),
                    events: [.ownershipTransferred(OwnershipTransferred(
                        originalTransactionId: originalTransactionId, productId: owned.productId, kind: owned.kind,
                        fromUserId: owned.ownerUserId, toUserId: user, transactionId: owned.transactionId,
                        submissionId: "app-account-token:\(originalTransactionId)", environment: owned.environment, bundleId: owned.bundleId))]))
            }
            return try await record(appends, alongside: [requestDocument.statement, answerDocument.statement]) ? set : nil
        case .failure(let error):
            guard error.kind == .refused, let body = error.attempts.last?.body else {
                throw LedgerServiceError(.appleUnavailable, "Apple's Set App Account Token: \(error)")
            }
            let answerDocument = DocumentStore.insert(body, kind: "apple_app_account_token_answer", sealedFor: seal)
            let refusal = error.errorCode.map(String.init) ?? "HTTP \(error.httpStatus ?? 0)"
            let refused = act("refused", refusal: refusal, request: requestDocument.name, answer: answerDocument.name)
            return try await record(
                [LedgerAppend(stream: tokenStream, expectation: expectation, events: [.appAccountTokenSet(refused)])],
                alongside: [requestDocument.statement, answerDocument.statement]) ? refused : nil
        }
    }
}
