import Foundation

/// An environment file as systemd's `EnvironmentFile=` reads one: `NAME=VALUE` lines, `#` and
/// `;` comments, blank lines, values optionally in single or double quotes. Enough for the
/// package's ledger.env and what operators write in it; systemd's line continuations and
/// escapes inside double quotes are not needed there and are not read.
enum EnvironmentFile {
    static func parse(_ text: String) -> [String: String] {
        var values: [String: String] = [:]
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            guard !line.isEmpty, !line.hasPrefix("#"), !line.hasPrefix(";"), let equals = line.firstIndex(of: "=") else { continue }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces)
            var value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first {
                value = String(value.dropFirst().dropLast())
            }
            values[name] = value
        }
        return values
    }
}
