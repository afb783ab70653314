import Foundation
import LedgerStore
import Primitives

/// One app the ledger serves, and what Apple needs to hear about it (docs/configuration.md,
/// "Several apps").
public struct AppSettings: Sendable, Hashable {
    /// The bundle id Apple's evidence names.
    public var bundleId: String
    /// The app's numeric Apple id, checked in production signed data.
    public var appAppleId: Int64?
    /// Sent to verifyReceipt as `password`, and checked on v1 notifications.
    public var sharedSecret: String?
    /// The app's catalog file, loaded at start.
    public var catalogFile: String?

    public init(bundleId: String, appAppleId: Int64? = nil, sharedSecret: String? = nil, catalogFile: String? = nil) {
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.sharedSecret = sharedSecret
        self.catalogFile = catalogFile
    }
}

/// The apps one ledger serves, in the order configured: `LEDGER_APPS`, or the one-app form
/// (`APPLE_BUNDLE_ID`, `APPLE_APP_APPLE_ID`, `APPLE_SHARED_SECRET`, `LEDGER_CATALOG`).
/// Never empty; bundle ids are unique.
public struct LedgerApps: Sendable, Hashable {
    public let apps: [AppSettings]
    /// The `LEDGER_APPS` file they were read from; nil for the one-app form.
    public private(set) var file: String?

    /// Checks what the list must be: at least one app, no bundle id twice.
    public init(_ apps: [AppSettings]) throws(LedgerServiceError) {
        guard !apps.isEmpty else { throw LedgerServiceError(.invalidConfiguration, "LEDGER_APPS lists no app") }
        var seen = Set<String>()
        for app in apps where !seen.insert(app.bundleId).inserted {
            throw LedgerServiceError(.invalidConfiguration, "LEDGER_APPS lists bundle id \(app.bundleId) twice")
        }
        self.apps = apps
    }

    /// One app: nothing to check.
    public init(only app: AppSettings) {
        apps = [app]
    }

    public var bundleIds: [String] { apps.map(\.bundleId) }

    /// The first app listed: the one whose shared secret goes to verifyReceipt when a submission
    /// names no app (an account's primary shared secret belongs there).
    public var first: AppSettings { apps[0] }

    public var isSeveral: Bool { apps.count > 1 }

    public func app(_ bundleId: String) -> AppSettings? { apps.first { $0.bundleId == bundleId } }

    /// `named` when this ledger serves it (an app named in a request or a query: 400
    /// `invalid_request` otherwise); nil when none is named.
    public func served(_ named: String?) throws(LedgerServiceError) -> String? {
        guard let named else { return nil }
        guard app(named) != nil else {
            throw LedgerServiceError(.invalidRequest, "bundle_id \(named) is not an app this ledger serves (\(bundleIds.joined(separator: ", ")))")
        }
        return named
    }

    /// How an operator finds the setting that names `app`'s catalog, for messages.
    public func catalogSetting(of app: AppSettings) -> String {
        file.map { "LEDGER_APPS (\($0), app \(app.bundleId), catalog)" } ?? "LEDGER_CATALOG"
    }

    /// Reads `LEDGER_APPS` (a file path) or, without it, the one-app form. Both at once is a
    /// mistake an operator should hear about, not a precedence rule to guess.
    public init(environment: [String: String]) throws(LedgerServiceError) {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        if let path = value("LEDGER_APPS") {
            for single in ["APPLE_BUNDLE_ID", "APPLE_APP_APPLE_ID", "APPLE_SHARED_SECRET", "LEDGER_CATALOG"] where value(single) != nil {
                throw LedgerServiceError(
                    .invalidConfiguration, "LEDGER_APPS and \(single) are both set: list every app, its secret and catalog in LEDGER_APPS")
            }
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw LedgerServiceError(.invalidConfiguration, "LEDGER_APPS: cannot read \(path)")
            }
            try self.init(parsing: data, file: path)
            return
        }
        guard let bundle = value("APPLE_BUNDLE_ID") else {
            throw LedgerServiceError(
                .invalidConfiguration, "APPLE_BUNDLE_ID is required (or LEDGER_APPS for several apps): receipts are checked against it")
        }
        var app = AppSettings(bundleId: bundle, sharedSecret: value("APPLE_SHARED_SECRET"), catalogFile: value("LEDGER_CATALOG"))
        if let text = value("APPLE_APP_APPLE_ID") {
            guard let id = Int64(text), id > 0 else {
                throw LedgerServiceError(.invalidConfiguration, "APPLE_APP_APPLE_ID is a number, not \(text)")
            }
            app.appAppleId = id
        }
        try self.init([app])
    }

    /// Parses an apps file: `{"apps":[{"bundle_id","app_apple_id"?,"shared_secret"?,"catalog"?}]}`.
    /// Strict: a field it does not know is refused by name, since a misspelt `shared_secret`
    /// would otherwise leave an app without its secret in silence. A relative catalog path is
    /// taken from the file's folder.
    public init(parsing data: Data, file: String) throws(LedgerServiceError) {
        func refuse(_ message: String) -> LedgerServiceError { LedgerServiceError(.invalidConfiguration, "LEDGER_APPS (\(file)): \(message)") }
        guard let root = try? JSONDecoder().decode(JSONValue.self, from: data), case .object(let top) = root else {
            throw refuse("not a JSON object {\"apps\": [...]}")
        }
        if let unknown = top.keys.sorted().first(where: { $0 != "apps" }) { throw refuse("unknown field \(unknown)") }
        guard case .array(let list)? = top["apps"] else { throw refuse("\"apps\" must be a list of apps") }
        let folder = URL(fileURLWithPath: file).deletingLastPathComponent()
        var apps: [AppSettings] = []
        for (index, item) in list.enumerated() {
            guard case .object(let fields) = item else { throw refuse("app \(index + 1) is not an object") }
            let known: Set<String> = ["bundle_id", "app_apple_id", "shared_secret", "catalog"]
            if let unknown = fields.keys.sorted().first(where: { !known.contains($0) }) {
                throw refuse("app \(index + 1) has an unknown field \(unknown)")
            }
            guard case .string(let bundle)? = fields["bundle_id"], Self.isBundleId(bundle) else {
                throw refuse("app \(index + 1) needs a bundle_id (letters, digits, '.', '-')")
            }
            var app = AppSettings(bundleId: bundle)
            switch fields["app_apple_id"] {
            case nil, .null?: break
            case .integer(let id)? where id > 0: app.appAppleId = id
            case .string(let text)? where Int64(text).map { $0 > 0 } == true: app.appAppleId = Int64(text)
            default: throw refuse("app \(bundle): app_apple_id is a positive number")
            }
            switch fields["shared_secret"] {
            case nil, .null?: break
            case .string(let secret)? where !secret.isEmpty: app.sharedSecret = secret
            default: throw refuse("app \(bundle): shared_secret is a non-empty string")
            }
            switch fields["catalog"] {
            case nil, .null?: break
            case .string(let path)? where !path.isEmpty:
                app.catalogFile = path.hasPrefix("/") ? path : folder.appendingPathComponent(path).path
            default: throw refuse("app \(bundle): catalog is a file path")
            }
            apps.append(app)
        }
        do {
            try self.init(apps)
            self.file = file
        } catch {
            throw refuse(String(error.message.dropFirst("LEDGER_APPS ".count)))
        }
    }

    /// Apple's bundle ids: letters, digits, hyphens and periods.
    public static func isBundleId(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 155
            && text.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "." || $0 == "-") }
    }
}
