/// One place that breaks a rule: the file and line to open, and what is wrong there.
struct Finding: Sendable, Hashable, CustomStringConvertible {
    /// Relative to the repository's root.
    var file: String
    var line: Int
    var message: String

    var description: String { "\(file):\(line): \(message)" }
}
