/// Imports point the way Package.swift and the layering say. Swift lets a file import any module
/// built before it, so a file can reach a module its target never declared (one that comes in
/// through another dependency) and the manifest no longer tells what depends on what. Two
/// checks: every module of ours a file imports is declared by its target; and what a target
/// declares and imports stays within its place in `Layering.table`.
enum ImportDirectionRule {
    /// `import X`, `@testable import X`, `public import X`, `import struct X.Y`…: the module.
    static var importLine: Regex<(Substring, Substring)> { #/^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+(?:(?:struct|class|enum|protocol|typealias|func|var|let)\s+)?([A-Za-z_][A-Za-z0-9_]*)/# }

    static func findings(in repository: Repository, layering: [String: Layering.Place] = Layering.table) -> [Finding] {
        let manifest = repository.manifest
        let importLine = Self.importLine
        let ours = Set(manifest.targets.map(\.name))
        var findings: [Finding] = []
        for target in manifest.targets {
            let allowed = Layering.allowed(for: target, table: layering)
            if target.kind != .testTarget, layering[target.name] == nil {
                findings.append(Finding(
                    file: manifest.path, line: target.line,
                    message: "target \(target.name) has no place in the layering table (Tests/ArchitectureTests/Layering.swift): say what it may use"))
            }
            if let allowed {
                for dependency in target.dependencies where !allowed.contains(dependency) {
                    findings.append(Finding(
                        file: manifest.path, line: target.line,
                        message: "target \(target.name) depends on \(dependency), against the layering (docs/architecture.md §2)"))
                }
            }
            for file in repository.files(of: target) {
                for (number, line) in file.lines {
                    guard let module = line.firstMatch(of: importLine).map({ String($0.1) }), ours.contains(module), module != target.name else { continue }
                    if !target.dependencies.contains(module) {
                        findings.append(Finding(
                            file: file.path, line: number,
                            message: "imports \(module), which its target \(target.name) does not declare in Package.swift"))
                    }
                    if let allowed, !allowed.contains(module) {
                        findings.append(Finding(
                            file: file.path, line: number,
                            message: "imports \(module), against the layering: \(target.name) may not use it (docs/architecture.md §2)"))
                    }
                }
            }
        }
        return findings
    }
}
