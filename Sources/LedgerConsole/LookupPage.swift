import AppStore
import Foundation
import Hummingbird
import Ledger
import LedgerQueries
import LedgerService
import LedgerStore

/// Support's one search box: a user id, order id, transaction id, original transaction id or
/// Apple order id gives the timeline (with the chain's verdict on exactly what is shown), Apple's
/// verbatim evidence one click away, ownership history, balances and spending, and what the
/// ledger told Apple about a refund request.
public struct LookupPage: Sendable {
    let console: Console

    func register<Context: ConsoleRequestContext>(on router: Router<Context>, routes: ConsoleRoutes<Context>) {
        router.get("console/lookup") { request, context in await routes.guarded(.lookup, request, context) { session in
            try await page(request, session)
        } }
        // Asking Apple appends an event and spends Apple's rate limit: a form with the
        // session's CSRF token, never a plain link or GET.
        router.post("console/lookup/apple-order") { request, context in
            await routes.guardedForm(.lookup, request, context, form: AppleOrderForm.self) { session, form in
                try await askApple(form.q ?? "", session: session, metadata: RequestMetadata(
                    requestId: context.requestID, actor: "console:\(session.tokenName)", clientAddress: context.clientAddress))
            }
        }
        router.get("console/documents/:sha256") { request, context in await routes.guarded(.lookup, request, context) { session in
            let name = try context.parameters.require("sha256")
            guard EvidenceDocument.isDocumentName(name) else { throw ConsoleError.badRequest("A document is named by its sha256: 64 hex digits.") }
            guard let document = try await console.service.documents.document(name.lowercased()) else {
                throw ConsoleError.notFound("The ledger holds no document \(name).")
            }
            // Shown opened; checked as stored, the bytes its name is the SHA-256 of (a sealed
            // document's are its envelope's, docs/erasure.md).
            let shown = EvidenceDocument(bytes: document.content)
            return console.renderer.page("document", title: "Evidence \(name.prefix(12))…", area: .lookup, session: session, values: [
                "sha256": name.lowercased(), "kind": shown.kind, "bytes": document.content.count,
                "sections": shown.sections.map { ["title": $0.title, "text": $0.text] },
                "verified": Array(DocumentStore.name(of: document.bytes)) == Array(name.lowercased()),
                "sealed_for": document.sealedFor?.rawValue ?? "",
            ])
        } }
    }

    /// The search as typed: one id of at most 200 characters on one line.
    private func searched(_ text: String) throws -> String {
        let query = text.trimmingCharacters(in: .whitespaces)
        guard query.count <= 200, query.allSatisfy({ !$0.isNewline }) else { throw ConsoleError.badRequest("Search for one id of at most 200 characters.") }
        return query
    }

    /// What the ledger itself holds about the id: never asks Apple. An id that matches nothing
    /// and looks like an Apple order id gets a button that asks Apple (a POST).
    private func page(_ request: Request, _ session: ConsoleSession) async throws -> Response {
        let query = try searched(request.uri.queryParameters.get("q") ?? "")
        var values: [String: Any] = ["q": query]
        guard !query.isEmpty else {
            return console.renderer.page("lookup", title: "Look-up", area: .lookup, session: session, values: values)
        }
        let before = try request.uri.queryParameters.get("before").map { text -> Int64 in
            guard let position = Int64(text), position > 0 else { throw ConsoleError.badRequest("before is a position in the log: a positive integer.") }
            return position
        }
        // Every kind of subject the id names, so a user id that is also a transaction id shows
        // both: asked at once, each on its own connection. Only what the page shows is parsed,
        // summed up and given Apple's evidence: its window of the table, the refund requests
        // and the spends.
        // An act's result links here with the position it recorded: the page waits for that act
        // only, not for every purchase recorded since (docs/console.md).
        guard let freshness = ReadFreshness(header: request.uri.queryParameters.get("after")) else {
            throw ConsoleError.badRequest("after is a position in the log: a whole number.")
        }
        let reads = console.reads.reading(freshness)
        let shown = Self.shown(before: before)
        // A person is read under the handle the log records for them (docs/erasure.md).
        let asPerson = try await console.service.people.knownHandle(forUser: query) ?? query
        async let asUser = reads.timeline(.user, asPerson, shown: shown)
        async let asOrder = reads.timeline(.order, query, shown: shown)
        async let asTransaction = reads.timeline(.transaction, query, shown: shown)
        // The user's view (balances, entitlements) beside them, in case the id is a user's: a
        // user's page then waits on one round of reads, not the timeline's and then the view's.
        // For any other id it finds nothing, and is not awaited.
        async let userView = reads.user(asPerson)
        let found = try await [asUser, asOrder, asTransaction].compactMap { $0 }
        let wanted = request.uri.queryParameters.get("as").flatMap(TimelineView.Kind.init(rawValue:))
        guard let timeline = found.first(where: { $0.kind == wanted }) ?? found.first else {
            values["nothing"] = true
            if AppleOrderID.looksLikeOne(query) {
                values["askApple"] = ["orderId": query, "csrf": session.csrfToken, "configured": console.service.serverAPI != nil] as [String: Any]
            }
            return console.renderer.page("lookup", title: "Look-up", area: .lookup, session: session, values: values)
        }
        values["alternatives"] = found.filter { $0.kind != timeline.kind }.map {
            ["kind": $0.kind.rawValue, "href": ConsoleLinks.lookup(query, as: $0.kind.rawValue)]
        }
        let user = timeline.kind == .user && timeline.subject == asPerson ? try await userView : nil
        try await show(timeline, before: before, user: user, reads: reads, in: &values)
        // Support's acts on the original transaction a transaction's page shows (ActForms).
        if let acts = try await ActForms(console: console).offer(for: timeline, session: session) { values["acts"] = acts }
        return console.renderer.page("lookup", title: "Look-up", area: .lookup, session: session, values: values)
    }

    /// Apple's Look Up Order ID for `orderId` (recorded as `AppleOrderLookedUp`), and what the
    /// ledger knows of the transactions Apple names.
    private func askApple(_ text: String, session: ConsoleSession, metadata: RequestMetadata) async throws -> Response {
        let orderId = try searched(text)
        guard AppleOrderID.looksLikeOne(orderId) else {
            throw ConsoleError.badRequest("Apple's order ids are ten capital letters and digits, as on the customer's receipt e-mail.")
        }
        var values: [String: Any] = ["q": orderId]
        if let appleOrder = try await console.service.lookUpAppleOrder(orderId, metadata: metadata) {
            values["appleOrder"] = [
                "orderId": appleOrder.orderId, "environment": appleOrder.environment,
                "transactions": appleOrder.transactions.map { t in
                    ["transactionId": t.transactionId, "href": ConsoleLinks.lookup(t.transactionId), "originalTransactionId": t.originalTransactionId,
                     "productId": t.productId, "country": t.storefront ?? Storefront.unknown,
                     "userId": t.userId ?? "not delivered by the ledger"] as [String: Any]
                },
            ] as [String: Any]
        } else {
            values["appleKnowsNothing"] = orderId
        }
        return console.renderer.page("lookup", title: "Look-up", area: .lookup, session: session, values: values)
    }

    /// The timeline's subject, chain verdict, entries, the user's balances and the ownership of
    /// every purchase it speaks of.
    /// The timeline's table shows this many entries at a time, the newest first chosen (in log
    /// order on the page), with links to the earlier and later ones: a user of years has
    /// hundreds, and writing every one into the page made it the console's slowest
    /// (docs/benchmarks.md). The chain's verdict and the sections above still cover them all.
    static let entriesPerPage = 100

    /// `user`: the timeline's user's view when the caller has read it already.
    private func show(
        _ timeline: TimelineView, before: Int64?, user read: UserView?, reads: ReadModels, in values: inout [String: Any]
    ) async throws {
        values["subject"] = ["kind": timeline.kind.rawValue, "id": timeline.subject]
        values["chain"] = [
            "verified": timeline.verified, "headHash": timeline.headHash ?? "none yet", "position": timeline.verifiedPosition,
            "count": timeline.entries.count,
        ] as [String: Any]
        let shown = Self.page(of: timeline.entries.map(\.position), before: before)
        values["timelineRows"] = LookupTablesHTML.timelineRows(timeline.entries[shown])
        values["hasEntries"] = !shown.isEmpty
        if shown.count < timeline.entries.count {
            func link(_ position: Int64?) -> String { ConsoleLinks.lookup(timeline.subject, as: timeline.kind.rawValue, before: position) }
            let later = shown.upperBound + Self.entriesPerPage
            values["paging"] = [
                "first": shown.lowerBound + 1, "last": shown.upperBound, "count": timeline.entries.count,
                "earlier": shown.lowerBound > 0 ? ["href": link(timeline.entries[shown.lowerBound].position)] as [String: Any] : false,
                "later": shown.upperBound < timeline.entries.count
                    ? ["href": link(later < timeline.entries.count ? timeline.entries[later].position : nil)] as [String: Any] : false,
            ] as [String: Any]
        }
        values["refundRequests"] = timeline.entries.filter { $0.type.hasPrefix("Consumption") }.map(refundRequest)
        // (`listedApart` names both lists' types, so their entries are read in full.)
        if timeline.kind == .user {
            let user = if let read { read } else { try await reads.user(timeline.subject) }
            values["user"] = [
                "balances": user.balances.map { ["app": $0.bundleId, "unit": $0.unit, "amount": $0.amount] as [String: Any] },
                "entitlementRows": LookupTablesHTML.entitlementRows(user.entitlements),
                "appleAccounts": user.appleAccounts,
                "spends": timeline.entries.filter { $0.type == "BalanceSpent" }.map { ["recordedAt": $0.recordedAt, "summary": $0.summary] },
            ] as [String: Any]
        }
        // Ownership of every original transaction the timeline speaks of.
        var originals: [String] = [], seen: Set<String> = []
        for entry in timeline.entries where originals.count < 20 {
            if let original = entry.originalTransactionId, seen.insert(original).inserted { originals.append(original) }
        }
        let ownerships = try await reads.ownerships(originals)
        values["ownerships"] = LookupTablesHTML.ownerships(ownerships)
        values["hasOwnerships"] = !ownerships.isEmpty
    }

    /// The indices of the entries one page shows, given every entry's position in log order:
    /// the last `entriesPerPage` before position `before` (the last ones when nil).
    static func page(of positions: [Int64], before: Int64?) -> Range<Int> {
        let end = before.map { position in positions.firstIndex { $0 >= position } ?? positions.count } ?? positions.count
        return max(0, end - entriesPerPage)..<end
    }

    /// The entries a page shows in full: its window of the table, and those listed apart. Public
    /// for `ledger-bench console`, which times a page's timeline as the page asks for it.
    public static func shown(before: Int64?) -> TimelineShown {
        { positions, types in
            var indices = Set(page(of: positions, before: before))
            for (index, type) in types.enumerated() where listedApart(type) { indices.insert(index) }
            return indices
        }
    }

    /// Entries the page lists apart from the table, whatever its window: refund requests and
    /// spends.
    static func listedApart(_ type: String) -> Bool { type.hasPrefix("Consumption") || type == "BalanceSpent" }

    /// A refund request as the list apart from the table shows it: what the ledger told Apple.
    private func refundRequest(_ entry: TimelineView.Entry) -> [String: Any] {
        ["recordedAt": entry.recordedAt, "type": entry.type, "summary": entry.summary, "data": EvidenceDocument.pretty(entry.data)]
    }
}

/// The look-up's "ask Apple" form: the Apple order id, and the session's CSRF token.
struct AppleOrderForm: ConsoleFormWithCSRF {
    var csrf: String?
    var q: String?
}

/// Apple's order ids: ten upper-case letters and digits (Look Up Order ID).
enum AppleOrderID {
    static func looksLikeOne(_ text: String) -> Bool {
        text.count == 10 && text.allSatisfy { ($0.isUppercase && $0.isASCII && $0.isLetter) || ($0.isASCII && $0.isNumber) }
    }
}
