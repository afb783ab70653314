/// An error from PostgreSQL or from this module, with the server's SQLSTATE and fields.
///
/// `description` holds the code, SQLSTATE, primary message and constraint name only: never
/// parameter values, the detail (which repeats row values) or the conninfo. Data-exception
/// messages (class 22) quote the offending input, so their quoted parts are redacted there.
/// `debugDescription` adds the detail, hint and SQL text (never parameter values).
public struct PostgresError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What kind of failure this is; extensible without breaking `switch`-free callers.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case connectionFailed, connectionLost, server, decoding, encoding, protocolViolation
            case poolClosed, copyFailed, columnNotFound, unexpectedNull, misuse
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// Could not open a connection (bad conninfo, server down, authentication failed).
        public static let connectionFailed = Code(.connectionFailed)
        /// The connection broke during use (server restart, network); retry on a new connection.
        public static let connectionLost = Code(.connectionLost)
        /// The server reported an error; see ``PostgresError/sqlState``.
        public static let server = Code(.server)
        /// A value could not be decoded into the requested Swift type.
        public static let decoding = Code(.decoding)
        /// A value could not be sent (for example a NUL byte in text).
        public static let encoding = Code(.encoding)
        /// libpq or the server answered something this module did not expect.
        public static let protocolViolation = Code(.protocolViolation)
        /// The pool was closed.
        public static let poolClosed = Code(.poolClosed)
        /// COPY failed on the client side (libpq refused data or the end of data).
        public static let copyFailed = Code(.copyFailed)
        /// A row has no column of the requested name or index.
        public static let columnNotFound = Code(.columnNotFound)
        /// A NULL was decoded into a non-optional type.
        public static let unexpectedNull = Code(.unexpectedNull)
        /// The API was used in a way it does not support (e.g. parameters on COPY).
        public static let misuse = Code(.misuse)

        public var description: String { base.rawValue }
    }

    public var code: Code
    public var sqlState: SQLState?
    /// The primary message (the server's, or ours). May quote input for data exceptions.
    public var message: String
    public var detail: String?
    public var hint: String?
    public var constraint: String?
    public var table: String?
    public var column: String?
    public var schema: String?
    /// The SQL text that failed (placeholders only, never parameter values).
    public var sql: String?

    public init(
        code: Code, sqlState: SQLState? = nil, message: String, detail: String? = nil,
        hint: String? = nil, constraint: String? = nil, table: String? = nil,
        column: String? = nil, schema: String? = nil, sql: String? = nil
    ) {
        self.code = code
        self.sqlState = sqlState
        self.message = message
        self.detail = detail
        self.hint = hint
        self.constraint = constraint
        self.table = table
        self.column = column
        self.schema = schema
        self.sql = sql
    }

    /// True when the connection is unusable: connection failures, losses and shutdowns.
    /// A pool discards such a connection and opens a new one on next use.
    public var isConnectionError: Bool {
        code == .connectionFailed || code == .connectionLost || (sqlState?.isConnectionClass ?? false)
    }

    /// True when running the same work again may succeed: connection errors, serialization
    /// failures and deadlocks.
    public var isRetryable: Bool {
        isConnectionError || (sqlState?.isTransactionRollback ?? false)
    }

    public var description: String {
        var text = "PostgresError.\(code)"
        if let sqlState { text += " (\(sqlState.rawValue))" }
        text += ": " + safeMessage
        if let constraint { text += " [constraint \(constraint)]" }
        return text
    }

    public var debugDescription: String {
        var text = description
        if let detail { text += "\nDETAIL: \(detail)" }
        if let hint { text += "\nHINT: \(hint)" }
        if let sql { text += "\nSQL: \(sql)" }
        return text
    }

    /// The message with quoted input removed where PostgreSQL echoes values (class 22).
    private var safeMessage: String {
        guard sqlState?.errorClass == "22" else { return message }
        var result = ""
        var inQuote = false
        for character in message {
            if character == "\"" {
                result.append(inQuote ? "…\"" : "\"")
                inQuote.toggle()
            } else if !inQuote {
                result.append(character)
            }
        }
        return result
    }
}

/// A transaction body failed and the ROLLBACK after it failed too; both errors are kept.
public struct TransactionRollbackFailed: Error, Sendable, CustomStringConvertible {
    /// The error thrown by the transaction's body (or by COMMIT).
    public var error: any Error
    /// The error from ROLLBACK.
    public var rollbackError: any Error

    public init(error: any Error, rollbackError: any Error) {
        self.error = error
        self.rollbackError = rollbackError
    }

    public var description: String {
        "TransactionRollbackFailed(error: \(error), rollbackError: \(rollbackError))"
    }
}

extension Error {
    /// True when this error (or the error inside a ``TransactionRollbackFailed``) says the
    /// connection is unusable.
    public var isPostgresConnectionError: Bool {
        switch self {
        case let error as PostgresError: return error.isConnectionError
        case let error as TransactionRollbackFailed:
            return error.error.isPostgresConnectionError || error.rollbackError.isPostgresConnectionError
        default: return false
        }
    }
}
