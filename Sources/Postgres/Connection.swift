import CLibPQ
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One libpq connection.
///
/// Not `Sendable`: use it from one thread at a time (a ``ConnectionPool`` runs each on its own
/// serial queue). It owns its `PGconn*` and calls `PQfinish` exactly once (in ``close()`` or
/// `deinit`). Every session gets `TimeZone=UTC`, `DateStyle=ISO`, `bytea_output=hex` and
/// `client_encoding=UTF8` on connect; results are read in text format.
public final class Connection {
    /// The `PGconn*`, nil once closed. Never exposed.
    private(set) var pgconn: OpaquePointer?
    public let logger: Logger
    private let noticeContext: Unmanaged<NoticeContext>
    var savepointDepth = 0
    /// Statements prepared on this session by ``query(_:preparedAs:resultFormat:)``: name → text.
    var preparedStatements: [String: String] = [:]

    private init(pgconn: OpaquePointer, logger: Logger) {
        self.pgconn = pgconn
        self.logger = logger
        self.noticeContext = Unmanaged.passRetained(NoticeContext(logger: logger))
        PQsetNoticeReceiver(pgconn, noticeReceiver, noticeContext.toOpaque())
    }

    deinit {
        if let pgconn { PQfinish(pgconn) }
        noticeContext.release()
    }

    /// Opens a connection from a conninfo string (`host=… dbname=…`) or a `postgres://` URI.
    ///
    /// Blocks until connected. Errors never contain the conninfo (it may hold a password).
    public static func connect(_ conninfo: String, logger: Logger) throws -> Connection {
        guard let pgconn = PQconnectdb(conninfo) else {
            throw PostgresError(code: .connectionFailed, message: "libpq could not allocate a connection")
        }
        guard PQstatus(pgconn) == CONNECTION_OK else {
            let message = errorMessage(of: pgconn)
            PQfinish(pgconn)
            throw PostgresError(code: .connectionFailed, message: message)
        }
        let connection = Connection(pgconn: pgconn, logger: logger)
        try connection.executeScript(unsafeSQL: """
            SET TimeZone = 'UTC'; SET DateStyle = 'ISO, MDY'; SET bytea_output = 'hex';
            SET client_encoding = 'UTF8'
            """)
        return connection
    }

    /// Closes the connection (`PQfinish`); later calls throw. Safe to call twice.
    public func close() {
        if let pgconn { PQfinish(pgconn) }
        pgconn = nil
    }

    /// True while the connection is open and libpq reports `CONNECTION_OK`. libpq notices a
    /// dropped server only on the next I/O, so this can be true for a connection that will fail.
    public var isAlive: Bool {
        guard let pgconn else { return false }
        return PQstatus(pgconn) == CONNECTION_OK
    }

    /// True inside a transaction block (also when it has failed and awaits ROLLBACK).
    public var isInTransaction: Bool {
        guard let pgconn else { return false }
        let status = PQtransactionStatus(pgconn)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    /// True inside a transaction block that has failed (only ROLLBACK is accepted).
    public var isInFailedTransaction: Bool {
        guard let pgconn else { return false }
        return PQtransactionStatus(pgconn) == PQTRANS_INERROR
    }

    /// The server's process id for this session (`pg_backend_pid()`), 0 when closed.
    public var backendPID: Int32 {
        guard let pgconn else { return 0 }
        return PQbackendPID(pgconn)
    }

    /// The open `PGconn*`, or an error when the connection was closed.
    func handle() throws -> OpaquePointer {
        guard let pgconn else {
            throw PostgresError(code: .connectionLost, message: "the connection is closed")
        }
        return pgconn
    }

    // MARK: - Statements

    /// Runs one statement with its parameters and returns its rows.
    ///
    /// - Parameter resultFormat: `.binary` saves the server formatting and us parsing each
    ///   value (bulk reads); every decoder of this module reads both formats.
    @discardableResult
    public func query(_ sql: SQL, resultFormat: PostgresFormat = .text) throws -> PostgresRows {
        if let name = sql.preparedName { return try query(sql, preparedAs: name, resultFormat: resultFormat) }
        let pgconn = try handle()
        let result = try withParameters(of: sql) { count, types, values, lengths, formats in
            PQexecParams(pgconn, sql.text, count, types, values, lengths, formats, resultFormat.rawValue)
        }
        defer { PQclear(result) }
        return try rows(from: result, sql: sql.text)
    }

    /// Runs one statement and returns the number of rows it affected.
    @discardableResult
    public func execute(_ sql: SQL) throws -> Int {
        try query(sql).affectedRows
    }

    /// Runs a script of several statements with the simple query protocol (for migrations).
    ///
    /// No parameters; statements run in order and the first error stops the script. Unless the
    /// script has its own BEGIN/COMMIT, the statements run as one implicit transaction.
    public func executeScript(unsafeSQL script: String) throws {
        let pgconn = try handle()
        guard !script.holdsNUL else {
            throw PostgresError(code: .encoding, message: "the script holds a NUL byte")
        }
        let result = PQexec(pgconn, script)
        defer { PQclear(result) }
        _ = try rows(from: result, sql: script)
    }

    // MARK: - Transactions

    /// Runs `body` in a transaction: BEGIN, then COMMIT, or ROLLBACK when it throws.
    ///
    /// Nested calls use a savepoint. When ROLLBACK fails too, throws
    /// ``TransactionRollbackFailed`` holding both errors. When the connection is lost, the
    /// server has ended the transaction, so the body's error is thrown as is. A body that
    /// swallows a database error leaves the transaction failed: the COMMIT then throws
    /// `inFailedSQLTransaction` instead of quietly rolling back.
    public func transaction<T>(_ body: (Connection) throws -> T) throws -> T {
        let nested = isInTransaction
        let savepoint = "purchase_ledger_savepoint_\(savepointDepth + 1)"
        if nested {
            try execute(SQL(unsafeSQL: "SAVEPOINT \(savepoint)"))
            savepointDepth += 1
        } else {
            try execute("BEGIN")
        }
        defer { if nested { savepointDepth -= 1 } }

        let value: T
        do {
            value = try body(self)
        } catch {
            try rollback(after: error, savepoint: nested ? savepoint : nil)
        }
        if isInFailedTransaction {
            let error = PostgresError(
                code: .server, sqlState: .inFailedSQLTransaction,
                message: "the transaction failed on an earlier statement whose error was caught; rolled back")
            try rollback(after: error, savepoint: nested ? savepoint : nil)
        }
        do {
            try execute(SQL(unsafeSQL: nested ? "RELEASE SAVEPOINT \(savepoint)" : "COMMIT"))
        } catch {
            // A failed COMMIT has already ended the transaction; a failed RELEASE has not.
            if nested || isInTransaction { try rollback(after: error, savepoint: nested ? savepoint : nil) }
            throw error
        }
        return value
    }

    /// Rolls back (the transaction, or to the savepoint) and throws `error`, or both errors.
    private func rollback(after error: any Error, savepoint: String?) throws -> Never {
        guard isAlive else { throw error }  // the server rolls back a session that ended
        do {
            if let savepoint {
                try execute(SQL(unsafeSQL: "ROLLBACK TO SAVEPOINT \(savepoint)"))
                try execute(SQL(unsafeSQL: "RELEASE SAVEPOINT \(savepoint)"))
            } else {
                try execute("ROLLBACK")
            }
        } catch let rollbackError {
            throw TransactionRollbackFailed(error: error, rollbackError: rollbackError)
        }
        throw error
    }
}

// MARK: - Notices

/// What the notice receiver needs; retained by the connection for its lifetime.
private final class NoticeContext {
    let logger: Logger
    init(logger: Logger) { self.logger = logger }
}

/// Logs server notices and warnings through swift-log instead of libpq's stderr default.
private let noticeReceiver: PQnoticeReceiver = { argument, result in
    guard let argument, let result else { return }
    let context = Unmanaged<NoticeContext>.fromOpaque(argument).takeUnretainedValue()
    func field(_ code: Int32) -> String? {
        PQresultErrorField(result, code).map { String(cString: $0) }
    }
    let severity = field(CLIBPQ_DIAG_SEVERITY) ?? "NOTICE"
    let message = field(CLIBPQ_DIAG_MESSAGE_PRIMARY) ?? "(no message)"
    let level: Logger.Level
    switch severity {
    case "WARNING": level = .warning
    case "NOTICE": level = .notice
    case "INFO", "LOG": level = .info
    default: level = .debug
    }
    context.logger.log(
        level: level, "\(message)",
        metadata: ["postgres.severity": "\(severity)", "postgres.sqlstate": "\(field(CLIBPQ_DIAG_SQLSTATE) ?? "")"])
}

/// A connection is used from one thread at a time; the pool moves it between callers itself.
@available(*, unavailable)
extension Connection: Sendable {}
