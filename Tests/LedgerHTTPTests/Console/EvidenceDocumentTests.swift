import Foundation
@testable import LedgerConsole
import Primitives
import Testing

/// Apple's bodies as support sees them: pretty, with the shared secret masked and signed
/// payloads decoded, while the page still names the exact bytes kept.
@Suite struct EvidenceDocumentTests {
    static func fixture(_ name: String) throws -> [UInt8] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return Array(try Data(contentsOf: root.appendingPathComponent("Fixtures/apple/\(name)")))
    }

    @Test func aV1NotificationShowsWithItsSharedSecretMasked() throws {
        // Monza's notification, with a shared secret of our own and a receipt of realistic length.
        var json = try #require(try JSONSerialization.jsonObject(with: Data(Self.fixture("notification-v1-initial_buy-monza.json"))) as? [String: Any])
        let secret = "shared-s3cret-4f9a0c"
        json["password"] = secret
        json["latest_receipt"] = String(repeating: "MIIT", count: 2_000)
        let bytes = Array(try JSONSerialization.data(withJSONObject: json))
        let shown = EvidenceDocument(bytes: bytes)
        #expect(shown.kind == "JSON")
        let text = shown.sections.map(\.text).joined(separator: "\n")
        #expect(!text.contains(secret))
        #expect(text.contains("\"password\" : \"•••• masked\""))
        #expect(text.contains("\"notification_type\" : \"INITIAL_BUY\""))
        // The latest receipt, a long base64 blob, is shortened, not dumped.
        #expect(text.contains("… (8000 characters)"))
        #expect(!text.contains(String(repeating: "MIIT", count: 20)))
    }

    @Test func aSignedPayloadIsDecodedForReading() throws {
        let jws = try String(decoding: Self.fixture("notification-v2-test-signedPayload-testca-asslib.jws"), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let shown = EvidenceDocument(bytes: Array("{\"signedPayload\":\"\(jws)\"}".utf8))
        let titles = shown.sections.map(\.title)
        #expect(titles.contains("signedPayload payload, decoded"))
        #expect(shown.sections.contains { $0.text.contains("\"notificationType\" : \"TEST\"") })
        // The certificate chain is described, not printed.
        #expect(shown.sections.contains { $0.text.contains("certificates (checked against Apple's root when recorded)") })
    }

    @Test func documentsCitedByAnEventAreFound() throws {
        let data = try JSONDecoder().decode(AppStoreJSON.self, from: Data("""
            {"document_sha256": "\(String(repeating: "ab", count: 32))", "document_sha256_list": ["\(String(repeating: "cd", count: 32))"], "other": "x"}
            """.utf8))
        #expect(EvidenceDocument.documentNames(in: data.value) == [String(repeating: "ab", count: 32), String(repeating: "cd", count: 32)])
    }
}

import AppStore
/// A JSONValue decoded from text, for the test above.
struct AppStoreJSON: Decodable {
    var value: JSONValue
    init(from decoder: any Decoder) throws { value = try JSONValue(from: decoder) }
}
