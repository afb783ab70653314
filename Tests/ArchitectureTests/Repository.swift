import Foundation

/// What the rules read: Package.swift and the Swift sources of every target, from the real
/// tree or, in the tests that show each rule bites, from a few files written in the test.
struct Repository: Sendable {
    let manifest: PackageManifest
    let files: [SwiftSource]

    init(manifest: String, files: [String: String]) {
        self.manifest = PackageManifest(text: manifest)
        self.files = files.sorted { $0.key < $1.key }.map { SwiftSource(path: $0.key, text: $0.value) }
    }

    /// The repository this file is in: its root is two folders above `Tests/ArchitectureTests`.
    /// Every Swift file under Sources/ and Tests/, and in any other folder a target names
    /// (`path: "Schema"`).
    static func checkedOut(filePath: String = #filePath) throws -> Repository {
        let root = URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let folders = Set(["Sources", "Tests"] + PackageManifest(text: manifest).targets.map(\.directory))
            .filter { folder in !["Sources/", "Tests/"].contains { folder.hasPrefix($0) } }
        var files: [String: String] = [:]
        for folder in folders {
            let base = root.appendingPathComponent(folder)
            guard let walk = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in walk where url.pathExtension == "swift" {
                let relative = folder + "/" + url.path.dropFirst(base.path.count + 1)
                files[relative] = try String(contentsOf: url, encoding: .utf8)
            }
        }
        return Repository(manifest: manifest, files: files)
    }

    /// The files of the target whose folder holds `file` (the longest folder that does).
    func target(of file: SwiftSource) -> PackageManifest.Target? {
        manifest.targets.filter { file.path.hasPrefix($0.directory + "/") }.max { $0.directory.count < $1.directory.count }
    }

    /// The Swift files of `target`.
    func files(of target: PackageManifest.Target) -> [SwiftSource] {
        files.filter { self.target(of: $0)?.name == target.name }
    }

    /// The files under `Sources/` (the library and executable targets, the benches included).
    var productionFiles: [SwiftSource] { files.filter { $0.path.hasPrefix("Sources/") } }
}
