/// The targets Package.swift declares, read from its text (comments blanked): enough of the
/// manifest to hold the rules, without evaluating it. The manifest is written in one style
/// (`.target(name: "X", dependencies: ["Y", .product(...)], path: …, swiftSettings: strict)`),
/// and the test over the real tree fails if it finds too few targets to be reading it right.
struct PackageManifest: Sendable {
    enum Kind: String, Sendable {
        case target, executableTarget, testTarget, systemLibrary
    }

    struct Target: Sendable {
        var name: String
        var kind: Kind
        /// Our targets it depends on (quoted names; `.product(…)`s of other packages left out).
        var dependencies: [String]
        /// The folder of its sources, relative to the root.
        var directory: String
        /// `swiftSettings: strict`: warnings are errors.
        var isStrict: Bool
        /// The line of Package.swift that declares it.
        var line: Int
    }

    /// The manifest's path, for findings: `Package.swift`.
    let path: String
    let targets: [Target]

    func target(named name: String) -> Target? { targets.first { $0.name == name } }

    init(path: String = "Package.swift", text: String) {
        self.path = path
        let source = SwiftSource(path: path, text: text)
        let code = source.code
        var targets: [Target] = []
        for match in code.matches(of: /\.(target|executableTarget|testTarget|systemLibrary)\s*\(/) {
            guard let kind = Kind(rawValue: String(match.1)), let body = Self.balanced(code[...], from: match.range.upperBound, open: "(", close: ")"),
                let name = body.firstMatch(of: /name:\s*"([^"]+)"/)?.1
            else { continue }
            var dependencies: [String] = []
            if let list = body.firstMatch(of: /dependencies:\s*\[/),
                let inside = Self.balanced(body, from: list.range.upperBound, open: "[", close: "]")
            {
                // A `.product(name: …, package: …)` is another package's: cut each one out, then
                // every quoted name left is a target of ours.
                var ours = String(inside)
                while let product = ours.firstMatch(of: /\.product\s*\(/),
                    let call = Self.balanced(ours[...], from: product.range.upperBound, open: "(", close: ")")
                {
                    ours.removeSubrange(product.range.lowerBound..<ours.index(after: call.endIndex))
                }
                dependencies = ours.matches(of: /"([^"]+)"/).map { String($0.1) }
            }
            let path = body.firstMatch(of: /path:\s*"([^"]+)"/).map { String($0.1) }
            targets.append(Target(
                name: String(name), kind: kind, dependencies: dependencies,
                directory: path ?? (kind == .testTarget ? "Tests/" : "Sources/") + name,
                isStrict: body.contains(/swiftSettings:\s*strict\b/), line: source.line(of: match.range.lowerBound)))
        }
        self.targets = targets
    }

    /// The text after an opening bracket at `start`'s left up to its matching close, or nil when
    /// it does not close. Brackets inside quoted strings do not count.
    static func balanced(_ text: Substring, from start: String.Index, open: Character, close: Character) -> Substring? {
        var depth = 1
        var inString = false
        var index = start
        while index < text.endIndex {
            let character = text[index]
            if character == "\"" { inString.toggle() }
            if !inString {
                if character == open { depth += 1 }
                if character == close {
                    depth -= 1
                    if depth == 0 { return text[start..<index] }
                }
            }
            index = text.index(after: index)
        }
        return nil
    }
}
