import Foundation
import LedgerService
import TestSupport
import Testing

/// `LEDGER_APPS` and the one-app form (docs/configuration.md, "Several apps"): what is read, and
/// every mistake refused with a message naming the setting and what is wrong.
@Suite struct LedgerAppsTests {
    /// Runs `body` with the path of an apps file holding `text`, in a folder removed after.
    private func withFile(_ text: String, _ body: (String) throws -> Void) async throws {
        try await TemporaryFolder.with("apps") { folder in
            let path = folder.appendingPathComponent("apps.json").path
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            try body(path)
        }
    }

    private func refusal(_ environment: [String: String]) -> String? {
        do {
            _ = try LedgerApps(environment: environment)
            return nil
        } catch {
            #expect(error.code == .invalidConfiguration)
            return error.message
        }
    }

    @Test func oneAppFormIsOneApp() throws {
        let apps = try LedgerApps(environment: [
            "APPLE_BUNDLE_ID": "com.acme.game", "APPLE_APP_APPLE_ID": "1234", "APPLE_SHARED_SECRET": "s3cret", "LEDGER_CATALOG": "/etc/c.json",
        ])
        #expect(apps.apps == [AppSettings(bundleId: "com.acme.game", appAppleId: 1234, sharedSecret: "s3cret", catalogFile: "/etc/c.json")])
        #expect(!apps.isSeveral)
        #expect(refusal([:])?.contains("APPLE_BUNDLE_ID is required") == true)
        #expect(refusal(["APPLE_BUNDLE_ID": "com.acme.game", "APPLE_APP_APPLE_ID": "12x"])?.contains("APPLE_APP_APPLE_ID") == true)
    }

    @Test func appsFileListsEachAppInOrder() async throws {
        try await withFile("""
            {"apps": [
              {"bundle_id": "com.acme.game", "app_apple_id": 1234, "shared_secret": "one", "catalog": "game.json"},
              {"bundle_id": "com.acme.reader", "app_apple_id": "5678", "catalog": "/srv/reader.json"}
            ]}
            """) { path in
            let apps = try LedgerApps(environment: ["LEDGER_APPS": path])
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
            #expect(apps.bundleIds == ["com.acme.game", "com.acme.reader"])
            #expect(apps.first.sharedSecret == "one")
            #expect(apps.app("com.acme.game")?.catalogFile == folder + "/game.json")
            #expect(apps.app("com.acme.reader") == AppSettings(bundleId: "com.acme.reader", appAppleId: 5678, catalogFile: "/srv/reader.json"))
            #expect(apps.app("com.acme.other") == nil)
            #expect(apps.isSeveral)
        }
    }

    @Test(arguments: [
        (#"{"apps": [{"bundle_id": "a.b"}, {"bundle_id": "a.b"}]}"#, "bundle id a.b twice"),
        (#"{"apps": [{"bundle_id": "a.b", "sharedsecret": "x"}]}"#, "unknown field sharedsecret"),
        (#"{"apps": [], "version": 1}"#, "unknown field version"),
        (#"{"apps": []}"#, "lists no app"),
        (#"{"apps": [{"app_apple_id": 1}]}"#, "app 1 needs a bundle_id"),
        (#"{"apps": [{"bundle_id": "a b"}]}"#, "app 1 needs a bundle_id"),
        (#"{"apps": [{"bundle_id": "a.b", "app_apple_id": -3}]}"#, "app_apple_id is a positive number"),
        (#"{"apps": [{"bundle_id": "a.b", "shared_secret": ""}]}"#, "shared_secret is a non-empty string"),
        (#"{"apps": [{"bundle_id": "a.b", "catalog": 7}]}"#, "catalog is a file path"),
        (#"["a.b"]"#, "not a JSON object"),
    ])
    func badAppsFileIsRefusedByName(text: String, expected: String) async throws {
        try await withFile(text) { path in
            let message = refusal(["LEDGER_APPS": path])
            #expect(message?.hasPrefix("LEDGER_APPS (\(path)): ") == true, "\(message ?? "accepted")")
            #expect(message?.contains(expected) == true, "\(message ?? "accepted")")
        }
    }

    @Test func bothFormsAtOnceAreRefused() async throws {
        try await withFile(#"{"apps": [{"bundle_id": "a.b"}]}"#) { path in
            #expect(refusal(["LEDGER_APPS": path, "APPLE_BUNDLE_ID": "a.b"])?.contains("LEDGER_APPS and APPLE_BUNDLE_ID are both set") == true)
            #expect(refusal(["LEDGER_APPS": path, "LEDGER_CATALOG": "/x"])?.contains("LEDGER_CATALOG") == true)
        }
        #expect(refusal(["LEDGER_APPS": "/nonexistent/apps.json"]) == "LEDGER_APPS: cannot read /nonexistent/apps.json")
    }
}
