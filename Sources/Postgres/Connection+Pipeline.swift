import CLibPQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Connection {
    /// Sends all statements at once (libpq pipeline mode) with one sync, and returns their rows
    /// in order: one round trip instead of one per statement.
    ///
    /// Without an explicit BEGIN, the statements up to the sync form one implicit transaction:
    /// when one fails, the statements after it are skipped, those before it are rolled back,
    /// and the first error is thrown. The connection stays usable either way.
    /// `resultFormat` applies to every statement's rows (`.binary` as for `query`).
    public func pipeline(_ statements: [SQL], resultFormat: PostgresFormat = .text) throws -> [PostgresRows] {
        guard !statements.isEmpty else { return [] }
        let pgconn = try handle()
        guard PQenterPipelineMode(pgconn) == 1 else {
            throw PostgresError(code: .misuse, message: "cannot enter pipeline mode: \(Self.errorMessage(of: pgconn))")
        }
        guard PQsetnonblocking(pgconn, 1) == 0 else {
            _ = PQexitPipelineMode(pgconn)
            throw PostgresError(code: .protocolViolation, message: "cannot make the connection non-blocking")
        }

        // Send. Non-blocking, so a full socket never deadlocks against a server that is
        // itself blocked writing results: we read while we wait to write.
        var sent = 0
        var sendError: (any Error)?
        // Statements `prepared()` and not yet prepared on this connection are prepared in the
        // pipeline, just before their first execution; the preparation has a result of its own.
        var preparing: Set<String> = []
        var preparedHere: [Bool] = []
        for sql in statements {
            do {
                var prepares = false
                if let name = sql.preparedName {
                    if let known = preparedStatements[name] {
                        guard known == sql.text else {
                            throw PostgresError(code: .misuse, message: "prepared statement \(name) was prepared with another text", sql: sql.text)
                        }
                    } else {
                        prepares = preparing.insert(name).inserted
                    }
                }
                try withParameters(of: sql) { count, types, values, lengths, formats in
                    if prepares, PQsendPrepare(pgconn, sql.preparedName, sql.text, count, types) != 1 {
                        throw error(from: nil, sql: sql.text)
                    }
                    let queued = if let name = sql.preparedName {
                        PQsendQueryPrepared(pgconn, name, count, values, lengths, formats, resultFormat.rawValue)
                    } else {
                        PQsendQueryParams(pgconn, sql.text, count, types, values, lengths, formats, resultFormat.rawValue)
                    }
                    guard queued == 1 else { throw error(from: nil, sql: sql.text) }
                }
                preparedHere.append(prepares)
                sent += 1
                if sent % 64 == 0 { try flushPipeline(pgconn) }
            } catch {
                sendError = error
                break
            }
        }
        if PQpipelineSync(pgconn) != 1 {
            sendError = sendError ?? error(from: nil, sql: nil)
        } else {
            do { try flushPipeline(pgconn) } catch { sendError = sendError ?? error }
        }
        _ = PQsetnonblocking(pgconn, 0)

        // Receive: each statement's results end with a NULL; the sync result comes last.
        var results = [PostgresRows]()
        var firstError: (any Error)?
        for (sql, prepares) in zip(statements.prefix(sent), preparedHere) {
            if prepares, let name = sql.preparedName {
                var ready = false
                while let result = PQgetResult(pgconn) {
                    defer { PQclear(result) }
                    if PQresultStatus(result) == PGRES_COMMAND_OK {
                        ready = true
                    } else if PQresultStatus(result) != PGRES_PIPELINE_ABORTED {
                        do { _ = try self.rows(from: result, sql: sql.text) } catch { firstError = firstError ?? error }
                    }
                }
                if ready { preparedStatements[name] = sql.text }
            }
            var rows: PostgresRows?
            while let result = PQgetResult(pgconn) {
                defer { PQclear(result) }
                if PQresultStatus(result) == PGRES_PIPELINE_ABORTED { continue }
                do {
                    rows = try self.rows(from: result, sql: sql.text)
                } catch {
                    firstError = firstError ?? error
                }
            }
            results.append(rows ?? PostgresRows(storage: .empty, affectedRows: 0))
        }
        if let sync = PQgetResult(pgconn) {
            if PQresultStatus(sync) != PGRES_PIPELINE_SYNC {
                firstError = firstError ?? PostgresError(code: .protocolViolation, message: "pipeline did not end with its sync")
            }
            PQclear(sync)
        }
        if PQexitPipelineMode(pgconn) != 1 {
            let error = PostgresError(
                code: isAlive ? .protocolViolation : .connectionLost,
                message: "cannot leave pipeline mode: \(Self.errorMessage(of: pgconn))")
            if isAlive { close() }  // a connection stuck in pipeline mode is of no further use
            throw sendError ?? firstError ?? error
        }
        if let error = sendError ?? firstError { throw error }
        return results
    }

    /// Flushes libpq's output buffer on a non-blocking connection, reading input while the
    /// socket is not writable.
    private func flushPipeline(_ pgconn: OpaquePointer) throws {
        while true {
            let status = PQflush(pgconn)
            if status == 0 { return }
            if status < 0 { throw error(from: nil, sql: nil) }
            var descriptor = pollfd(fd: PQsocket(pgconn), events: Int16(POLLIN | POLLOUT), revents: 0)
            let ready = poll(&descriptor, 1, -1)
            if ready < 0 && errno != EINTR {
                throw PostgresError(code: .protocolViolation, message: "poll failed with errno \(errno)")
            }
            if ready > 0 && descriptor.revents & Int16(POLLIN) != 0 {
                guard PQconsumeInput(pgconn) == 1 else { throw error(from: nil, sql: nil) }
            }
        }
    }
}
