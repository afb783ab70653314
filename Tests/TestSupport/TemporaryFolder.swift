import Foundation

/// A folder of a test's own under the system's temporary folder, removed when the test is done
/// with it, whether the test passed or threw.
public enum TemporaryFolder {
    public static func with<T>(_ prefix: String, _ body: (URL) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try await body(folder)
    }
}
