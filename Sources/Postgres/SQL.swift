/// A statement whose interpolated values become bound parameters: `"… WHERE id = \(id)"` is
/// sent as `"… WHERE id = $1"` with `id` bound to `$1`. SQL is never built from values.
///
/// Interpolate `identifier:` for a quoted name (a schema or channel) and `unsafeRaw:` for text
/// the caller vouches for. Fragments compose: `\(fragment: other)` embeds another `SQL`, renumbering its
/// parameters.
public struct SQL: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The statement text with `$1`, `$2`, … placeholders.
    public private(set) var text: String
    /// The parameter values, `bindings[0]` for `$1`.
    public private(set) var bindings: [PostgresData]
    /// Literal text and parameter slots, kept so fragments can be renumbered when combined.
    private var parts: [Part]
    /// Set when an interpolation was invalid (e.g. a NUL in an identifier); executing throws it.
    public private(set) var invalidReason: String?
    /// The name it runs under as a prepared statement of the session, when `prepared()`.
    public private(set) var preparedName: String?

    private enum Part: Sendable {
        case literal(String)
        case parameter
    }

    /// A statement with no parameters; the caller vouches that `unsafeSQL` holds no untrusted text.
    public init(unsafeSQL: String) {
        self.text = unsafeSQL
        self.bindings = []
        self.parts = [.literal(unsafeSQL)]
        self.invalidReason = nil
    }

    public init(stringLiteral value: String) {
        self.init(unsafeSQL: value)
    }

    public init(stringInterpolation: StringInterpolation) {
        self = stringInterpolation.sql
    }

    /// This statement, run as a prepared statement of each connection (`query`, `pipeline`):
    /// parsed, analysed and planned once per connection, then only bound and executed. For a
    /// hot statement whose text never changes; each parameter's type must be the same on every
    /// call. Its name is derived from the text, so equal texts share one preparation.
    public func prepared() -> SQL {
        var copy = self
        copy.preparedName = "purchase_ledger_" + String(text.fnv1a, radix: 16)
        return copy
    }

    /// `sql.prepared()`, where a statement's type is known: `let find: SQL = .prepared("…")`.
    public static func prepared(_ sql: SQL) -> SQL { sql.prepared() }

    /// Makes the rest of the current transaction (an explicit one, or a pipeline's implicit
    /// one) commit without waiting for its WAL flush: `SET LOCAL synchronous_commit = off`,
    /// prepared. For writes that can be rebuilt if a crash loses them (read models).
    public static let commitWithoutWaitingForFlush: SQL = .prepared("SELECT set_config('synchronous_commit', 'off', true)")

    /// The SQL text only: parameter values are never shown.
    public var description: String { text }

    /// Appends literal text.
    public mutating func append(unsafeSQL text: String) {
        self.text += text
        parts.append(.literal(text))
    }

    /// Appends a bound parameter and its `$n` placeholder.
    public mutating func append(binding value: PostgresData) {
        bindings.append(value)
        text += "$\(bindings.count)"
        parts.append(.parameter)
    }

    /// Appends another statement, renumbering its placeholders after this one's.
    public mutating func append(_ other: SQL) {
        var index = 0
        for part in other.parts {
            switch part {
            case .literal(let literal): append(unsafeSQL: literal)
            case .parameter:
                append(binding: other.bindings[index])
                index += 1
            }
        }
        if invalidReason == nil { invalidReason = other.invalidReason }
    }

    public static func + (lhs: SQL, rhs: SQL) -> SQL {
        var result = lhs
        result.append(rhs)
        return result
    }

    public static func += (lhs: inout SQL, rhs: SQL) {
        lhs.append(rhs)
    }

    /// Joins fragments with a separator, e.g. `SQL.join(rows, separator: ", ")`.
    public static func join(_ fragments: some Sequence<SQL>, separator: String) -> SQL {
        var result = SQL(unsafeSQL: "")
        for (offset, fragment) in fragments.enumerated() {
            if offset > 0 { result.append(unsafeSQL: separator) }
            result.append(fragment)
        }
        return result
    }

    /// `name` quoted as a PostgreSQL identifier, as `PQescapeIdentifier` does: in double
    /// quotes, with each double quote doubled. Returns nil when it holds a NUL (not allowed).
    public static func quoteIdentifier(_ name: String) -> String? {
        guard !name.holdsNUL else { return nil }
        return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `text` quoted as a PostgreSQL string literal, as `PQescapeLiteral` does, for the
    /// statements that take no parameters (`COMMENT ON`): single quotes doubled, and, when it
    /// holds a backslash, an `E''` literal with backslashes doubled, so the result reads the
    /// same whatever `standard_conforming_strings` says. Returns nil when it holds a NUL.
    public static func quoteLiteral(_ text: String) -> String? {
        guard !text.holdsNUL else { return nil }
        let quoted = text.replacingOccurrences(of: "'", with: "''")
        guard text.contains("\\") else { return "'" + quoted + "'" }
        return " E'" + quoted.replacingOccurrences(of: "\\", with: "\\\\") + "'"
    }

    public struct StringInterpolation: StringInterpolationProtocol, Sendable {
        var sql: SQL

        public init(literalCapacity: Int, interpolationCount: Int) {
            sql = SQL(unsafeSQL: "")
            sql.parts.removeAll()
            sql.text.reserveCapacity(literalCapacity + interpolationCount * 3)
        }

        public mutating func appendLiteral(_ literal: String) {
            sql.append(unsafeSQL: literal)
        }

        /// A bound parameter.
        public mutating func appendInterpolation<T: PostgresEncodable>(_ value: T) {
            sql.append(binding: value.postgresData)
        }

        /// A bound parameter; NULL when nil.
        public mutating func appendInterpolation<T: PostgresEncodable>(_ value: T?) {
            sql.append(binding: value?.postgresData ?? .null(T.postgresType))
        }

        /// A quoted identifier (schema, table, column or channel name).
        public mutating func appendInterpolation(identifier name: String) {
            if let quoted = SQL.quoteIdentifier(name) {
                sql.append(unsafeSQL: quoted)
            } else {
                sql.append(unsafeSQL: "\"\"")
                sql.invalidReason = sql.invalidReason ?? "an identifier holds a NUL character"
            }
        }

        /// Text pasted as is; the caller vouches for it.
        public mutating func appendInterpolation(unsafeRaw text: String) {
            sql.append(unsafeSQL: text)
        }

        /// Another statement fragment, its parameters renumbered.
        /// (Labelled so a string literal is never taken for SQL: `\("x")` is always a parameter.)
        public mutating func appendInterpolation(fragment: SQL) {
            sql.append(fragment)
        }
    }
}
