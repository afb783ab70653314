/// One line of a tab-separated report: its 1-based number (for errors) and its fields, trimmed.
///
/// Apple pads some empty fields with a space, so fields are trimmed of spaces; a line of only
/// tabs and spaces is blank.
struct ReportRow: Sendable, Hashable {
    var number: Int
    var fields: [String]

    var isBlank: Bool { fields.allSatisfy(\.isEmpty) }

    /// The lines of `text`, split on LF, CRLF or CR (`Character.isNewline`: "\r\n" is one
    /// Character in Swift, so splitting on "\n" alone would miss it), after a UTF-8 byte order
    /// mark if there is one. Empty lines are kept so that line numbers match the file.
    static func rows(of text: String) -> [ReportRow] {
        var scalars = Substring(text).unicodeScalars
        if scalars.first == "\u{FEFF}" { scalars = scalars.dropFirst() }
        let body = Substring(scalars)
        var rows: [ReportRow] = []
        for (index, line) in body.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(trimmingSpaces)
            rows.append(ReportRow(number: index + 1, fields: fields))
        }
        return rows
    }

    /// `field` without the spaces at either end: Foundation's `.whitespaces`, which are the
    /// Unicode space separators (Zs), tab and the zero-width space U+200B (a Zs character in
    /// older Unicode, which Foundation's set still holds), compared scalar by scalar as
    /// Foundation does.
    static func trimmingSpaces(_ field: Substring) -> String {
        func isSpace(_ scalar: Unicode.Scalar) -> Bool {
            scalar == "\t" || scalar == "\u{200B}" || scalar.properties.generalCategory == .spaceSeparator
        }
        let scalars = field.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }), let last = scalars.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(Substring(scalars[first...last]))
    }
}

/// A report's column line: where each named column is, found by name because Apple adds and
/// reorders columns between report versions.
///
/// Names compare case-insensitively: Apple spells one column both "Country of Sale" and
/// "Country Of Sale".
struct ReportColumns: Sendable {
    private var positions: [String: Int] = [:]

    init(_ names: [String]) {
        // The first of two equal names wins, as a reader scanning left to right would take it.
        for (position, name) in names.enumerated() where !name.isEmpty {
            let key = name.lowercased()
            if positions[key] == nil { positions[key] = position }
        }
    }

    func contains(_ name: String) -> Bool { positions[name.lowercased()] != nil }

    func contains(all names: [String]) -> Bool { names.allSatisfy { contains($0) } }

    /// Throws naming every column of `names` the line lacks.
    func require(_ names: [String], line: Int, report: String) throws(AppStoreReportError) {
        let missing = names.filter { !contains($0) }
        guard missing.isEmpty else {
            let list = missing.map { "\"\($0)\"" }.joined(separator: ", ")
            throw AppStoreReportError("the \(report) has no column \(list)", line: line)
        }
    }

    /// The field of `row` under `name`; empty when the column is absent or the row is short
    /// (a row may end before its trailing empty fields).
    func value(_ name: String, in row: ReportRow) -> String {
        guard let position = positions[name.lowercased()], position < row.fields.count else { return "" }
        return row.fields[position]
    }
}
