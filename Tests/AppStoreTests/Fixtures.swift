import AppStoreClient
import Foundation
import Primitives
import Testing
import X509

@testable import AppStore

/// The Apple fixtures copied verbatim from `shared/fixtures/apple` (see their SOURCES.md).
enum Fixtures {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/apple")

    static func data(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(name))
    }

    static func text(_ name: String) throws -> String {
        String(decoding: try data(name), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ name: String) throws -> T {
        try JSONDecoder().decode(type, from: try data(name))
    }

    static func verifyReceipt(_ name: String) throws -> VerifyReceiptResponse {
        try VerifyReceiptResponse(jsonBytes: try data(name))
    }

    static func appleRoot() throws -> Certificate {
        try Certificate(derEncoded: Array(try data("cert-AppleRootCA-G3-imdhemy.cer")))
    }

    static func testRoot() throws -> Certificate {
        try Certificate(derEncoded: Array(try data("cert-testCA-asslib.der")))
    }

    /// The verifier app-store-server-library's own tests use for its mock signed data.
    static func testCAVerifier(bundleID: String = "com.example", environment: AppStoreEnvironment = .sandbox,
                               validationTime: SignedDataVerifier.ValidationTime = .signedDate) throws -> SignedDataVerifier {
        SignedDataVerifier(rootCertificates: [try testRoot()], bundleID: bundleID, environment: environment,
                           appAppleID: 1234, validationTime: validationTime, clock: .system)
    }

    /// Milliseconds since 1970 for a UTC date, to write expectations readably.
    static func ms(_ year: Int64, _ month: Int64, _ day: Int64, _ hour: Int64, _ minute: Int64, _ second: Int64) -> Int64 {
        ((UTCDays.daysSince1970(year: year, month: month, day: day) * 24 + hour) * 60 + minute) * 60_000 + second * 1000
    }
}

/// Expects `body` to throw an `AppStoreError` with `code`.
func expectError(
    _ code: AppStoreError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async {
    do {
        try await body()
        Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as AppStoreError {
        #expect(error.code == code, "\(error.debugDescription)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
}

/// Expects `body` to throw an `AppStoreError` with `code`, synchronously.
func expectErrorNow(_ code: AppStoreError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as AppStoreError {
        #expect(error.code == code, "\(error.debugDescription)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
}
