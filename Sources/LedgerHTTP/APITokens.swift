import Crypto
import LedgerConsole
import Foundation
import LedgerService
import Postgres
import Primitives

/// What a bearer token may do (docs/configuration.md `LEDGER_API_TOKENS`).
public enum APIScope: String, Sendable, Hashable {
    /// The app's backend: orders, receipts, transactions, its users' state.
    case app
    /// Finance: reports, timelines, accounts, reconciliation, and the reads `app` has.
    case finance
    /// Support: users, timelines, disputes and Apple order look-ups; never revenue.
    case support
}

/// The configured tokens, held as sha256 digests and compared in constant time, so neither
/// the token nor how much of it matched leaks through timing or memory dumps of requests.
public struct APITokens: Sendable {
    struct Entry: Sendable {
        var digest: [UInt8]
        var scope: APIScope
        var name: String
        /// The app the token is limited to (`token:scope@BUNDLE_ID`); nil: every app served.
        var bundleId: String?
    }

    let entries: [Entry]

    /// Parses `token:scope,token:scope@BUNDLE_ID`. An empty string: no tokens, every call refused.
    public init(parsing text: String) throws {
        var entries: [Entry] = []
        for item in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !item.isEmpty {
            guard let colon = item.lastIndex(of: ":") else {
                throw TokensError("each LEDGER_API_TOKENS item is token:scope (app, finance or support), or token:scope@BUNDLE_ID")
            }
            let token = String(item[..<colon])
            let limit = item[item.index(after: colon)...].split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
            guard let scope = APIScope(rawValue: String(limit[0])), token.count >= 8 else {
                throw TokensError("each LEDGER_API_TOKENS item is token:scope, the token at least 8 characters, the scope app, finance or support")
            }
            var bundleId: String?
            if limit.count == 2 {
                guard LedgerApps.isBundleId(String(limit[1])) else {
                    throw TokensError("a LEDGER_API_TOKENS item limited to an app is token:scope@BUNDLE_ID, not @\(limit[1])")
                }
                bundleId = String(limit[1])
            }
            let digest = Array(SHA256.hash(data: Array(token.utf8)))
            entries.append(Entry(digest: digest, scope: scope, name: "api:" + Hex.encode(digest.prefix(3)), bundleId: bundleId))
        }
        self.entries = entries
    }

    /// Each token's scope, in the order configured (what `config check` may say of them).
    public var scopes: [APIScope] { entries.map(\.scope) }

    /// The apps tokens are limited to, each once.
    public var limitedApps: Set<String> { Set(entries.compactMap(\.bundleId)) }

    /// The scope and actor name of `token`, or nil. Every entry is compared, in constant time.
    func authenticate(_ token: String) -> Entry? {
        let digest = Array(SHA256.hash(data: Array(token.utf8)))
        var found: Entry?
        for entry in entries where ConstantTime.equal(entry.digest, digest) { found = entry }
        return found
    }

    /// A token typed at the console's sign-in: its role and name when its scope has a screen.
    /// A token limited to one app has none yet: the console's pages are not filtered by app.
    public func consoleSignIn(_ token: String) -> (role: ConsoleRole, name: String)? {
        guard let entry = authenticate(token), entry.bundleId == nil else { return nil }
        switch entry.scope {
        case .finance: return (.finance, entry.name)
        case .support: return (.support, entry.name)
        case .app: return nil
        }
    }

    /// Whether a token named `name` (`api:` and 6 hex digits of its sha256) is still configured
    /// with the scope that gives `role`: a console session ends once its token is removed or
    /// its scope changes.
    public func consoleSignsIn(named name: String, as role: ConsoleRole) -> Bool {
        entries.contains { entry in
            guard entry.name == name, entry.bundleId == nil else { return false }
            switch entry.scope {
            case .finance: return role == .finance
            case .support: return role == .support
            case .app: return false
            }
        }
    }

    public struct TokensError: Error, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }
}
