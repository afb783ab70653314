import Foundation

/// A file outside the database the ledger appends lines to and syncs: the digest file
/// (`LEDGER_DIGEST_FILE`) and the erasure journal (`LEDGER_ERASURE_JOURNAL`), kept where the
/// database's loss or restore does not reach. Writes run on a queue of their own, one at a time,
/// never on the cooperative pool: an fsync may take as long as the disk likes, and two writers'
/// lines must not interleave.
public final class AppendOnlyFile: Sendable {
    public let path: String
    /// The setting that names the file, for errors.
    let setting: String
    private let queue: DispatchQueue

    public init(path: String, setting: String) {
        self.path = path
        self.setting = setting
        queue = DispatchQueue(label: "AppendOnlyFile \(setting)")
    }

    /// Appends `line` (a newline is added) and returns once the disk has it; makes the file when
    /// it does not exist (its mode is the process's umask: the unit's is 0077).
    public func append(_ line: String) async throws {
        let (path, setting) = (path, setting)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            queue.async {
                continuation.resume(with: Result { try Self.write(Data((line + "\n").utf8), to: path, setting: setting) })
            }
        }
    }

    private static func write(_ data: Data, to path: String, setting: String) throws {
        let manager = FileManager.default
        if !manager.fileExists(atPath: path), !manager.createFile(atPath: path, contents: nil) {
            throw AppendOnlyFileError(setting: setting, path: path, reason: "cannot create it")
        }
        guard let handle = FileHandle(forWritingAtPath: path) else { throw AppendOnlyFileError(setting: setting, path: path, reason: "cannot open it for writing") }
        defer { try? handle.close() }
        do {
            try handle.seekToEnd()
            try handle.write(contentsOf: data)
            try handle.synchronize()
        } catch {
            throw AppendOnlyFileError(setting: setting, path: path, reason: "cannot append to it: \(error)")
        }
    }

    /// True when the file can be appended to: one this user may write, or a folder it may make
    /// one in. Checked at start, so a bad setting exits 78 instead of failing its first write.
    public var isWritable: Bool {
        let manager = FileManager.default
        var isFolder: ObjCBool = false
        if manager.fileExists(atPath: path, isDirectory: &isFolder) { return !isFolder.boolValue && manager.isWritableFile(atPath: path) }
        let folder = (path as NSString).deletingLastPathComponent
        return manager.isWritableFile(atPath: folder.isEmpty ? "." : folder)
    }
}

public struct AppendOnlyFileError: Error, CustomStringConvertible {
    let setting: String
    let path: String
    let reason: String
    public var description: String { "\(setting) \(path): \(reason)" }
}
