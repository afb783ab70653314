import LedgerService
import LedgerStore

extension Console {
    /// The app a page's `bundle_id` filter (its query value, `named`) keeps; nil (empty or
    /// absent): every app's. An app this ledger does not serve is a bad request.
    func appFilter(_ named: String?) throws -> String? {
        do throws(LedgerServiceError) {
            return try service.configuration.apps.served(named.flatMap { $0.isEmpty ? nil : $0 })
        } catch {
            throw ConsoleError.badRequest("\(error.message).")
        }
    }

    /// The filter's choices: every app, then each app served.
    func appChoices(selected: String?) -> [[String: Any]] {
        [["value": "", "label": "every app", "selected": selected == nil]]
            + service.configuration.apps.bundleIds.map { ["value": $0, "label": $0, "selected": $0 == selected] }
    }
}
