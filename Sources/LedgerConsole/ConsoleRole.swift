/// Who may sign in to the console, from the scope of the token they sign in with (docs/configuration.md
/// `LEDGER_API_TOKENS`): finance sees everything, support sees people and their purchases,
/// never revenue. An `app` token does not sign in: the app's backend has no screen.
public enum ConsoleRole: String, Sendable, Hashable {
    case finance, support

    /// The pages this role may open.
    func may(_ area: ConsoleArea) -> Bool {
        switch (self, area) {
        case (.finance, _): true
        case (.support, .lookup): true
        case (.support, .revenue), (.support, .subscriptions), (.support, .mrr), (.support, .cohorts), (.support, .refunds), (.support, .reconciliation),
             (.support, .webhooks): false
        }
    }

    /// Whether this role may ask Apple to change a purchase from the look-up page (extend a
    /// renewal date, attach an app account token): support only. Finance reads, never acts.
    var mayAct: Bool { self == .support }

    /// Where a signed-in user lands.
    var home: String { self == .finance ? "/console/revenue" : "/console/lookup" }
}

/// The console's areas, one per navigation tab.
enum ConsoleArea: String, Sendable, CaseIterable {
    case revenue, subscriptions, mrr, cohorts, refunds, lookup, reconciliation, webhooks

    var title: String {
        switch self {
        case .revenue: "Revenue"
        case .subscriptions: "Subscriptions"
        case .mrr: "MRR"
        case .cohorts: "Cohorts"
        case .refunds: "Refunds"
        case .lookup: "Look-up"
        case .reconciliation: "Reconciliation"
        case .webhooks: "Webhooks"
        }
    }
}

/// Checks a token typed at sign-in: its role and its name for logs (never the token), or nil
/// when it is unknown or its scope has no console.
public typealias ConsoleSignIn = @Sendable (_ token: String) -> (role: ConsoleRole, name: String)?

/// Whether a configured token named `tokenName` (`api:` and the first 6 hex digits of its
/// sha256) still signs in to the console as `role`: false once the token is removed from
/// `LEDGER_API_TOKENS` or given another scope, which ends its sessions at their next request.
public typealias ConsoleTokenCheck = @Sendable (_ tokenName: String, _ role: ConsoleRole) -> Bool
