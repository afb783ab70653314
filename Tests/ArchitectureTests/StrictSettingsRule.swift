/// Every target of ours builds with warnings as errors (`swiftSettings: strict`, Package.swift).
/// A system library (CLibPQ) and a C target (CBuildInfo) have no Swift settings to give: a
/// target counts as Swift when its folder holds a Swift file.
enum StrictSettingsRule {
    static func findings(in repository: Repository) -> [Finding] {
        repository.manifest.targets.compactMap { target in
            guard target.kind != .systemLibrary, !target.isStrict, !repository.files(of: target).isEmpty else { return nil }
            return Finding(
                file: repository.manifest.path, line: target.line,
                message: "target \(target.name) does not build with warnings as errors: add `swiftSettings: strict`")
        }
    }
}
