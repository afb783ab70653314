import CLibPQ

extension Connection {
    /// Runs `COPY … FROM STDIN` and sends what `produce` writes; returns the rows copied.
    ///
    /// `sql` takes no parameters (COPY has none); quote names with `\(identifier:)`. When
    /// `produce` throws, the COPY is aborted (nothing is stored) and its error rethrown. The
    /// writer is valid only inside `produce`.
    public func copyIn(_ sql: SQL, _ produce: (CopyInWriter) throws -> Void) throws -> Int {
        let pgconn = try startCopy(sql, expecting: PGRES_COPY_IN)
        let sink = CopyInSink(connection: self, pgconn: pgconn)
        do {
            try produce(CopyInWriter(sink: sink))
            try sink.flush()
        } catch {
            // The server answers an aborted COPY with an error (57014); the caller's error wins.
            if PQputCopyEnd(pgconn, "COPY aborted by the client") == 1 {
                _ = try? finishCommand(sql: sql.text)
            }
            throw error
        }
        guard PQputCopyEnd(pgconn, nil) == 1 else {
            let error = copyError("could not end COPY data", sql: sql.text)
            _ = try? finishCommand(sql: sql.text)
            throw error
        }
        return try finishCommand(sql: sql.text).affectedRows
    }

    /// Runs `COPY … TO STDOUT` and hands each chunk to `consume` as libpq delivers it (one row
    /// per chunk in text or CSV format), never holding the whole output; returns the rows.
    ///
    /// When `consume` throws, the query is cancelled, the rest is discarded, and the error
    /// rethrown.
    public func copyOut(_ sql: SQL, _ consume: ([UInt8]) throws -> Void) throws -> Int {
        let pgconn = try startCopy(sql, expecting: PGRES_COPY_OUT)
        var consumerError: (any Error)?
        while true {
            var buffer: UnsafeMutablePointer<CChar>?
            let length = PQgetCopyData(pgconn, &buffer, 0)
            if length > 0, let buffer {
                defer { PQfreemem(buffer) }
                guard consumerError == nil else { continue }
                do {
                    try consume(Array(UnsafeRawBufferPointer(start: buffer, count: Int(length))))
                } catch {
                    consumerError = error
                    cancelRunningQuery()
                }
            } else if length == -1 {
                break  // done; the command's result follows
            } else {
                break  // -2: an error, reported by the result that follows
            }
        }
        do {
            let rows = try finishCommand(sql: sql.text)
            if let consumerError { throw consumerError }
            return rows.affectedRows
        } catch {
            throw consumerError ?? error
        }
    }

    /// Sends a COPY statement and checks that the server entered the expected COPY state.
    private func startCopy(_ sql: SQL, expecting expected: ExecStatusType) throws -> OpaquePointer {
        guard sql.bindings.isEmpty else {
            throw PostgresError(code: .misuse, message: "COPY takes no parameters", sql: sql.text)
        }
        let pgconn = try handle()
        let result = try withParameters(of: sql) { count, types, values, lengths, formats in
            PQexecParams(pgconn, sql.text, count, types, values, lengths, formats, PostgresFormat.text.rawValue)
        }
        defer { PQclear(result) }
        if let result, PQresultStatus(result) == expected { return pgconn }
        _ = try rows(from: result, sql: sql.text)  // throws the error, or misuse for the wrong COPY
        throw PostgresError(
            code: .misuse,
            message: expected == PGRES_COPY_IN ? "not a COPY … FROM STDIN statement" : "not a COPY … TO STDOUT statement",
            sql: sql.text)
    }

    /// Reads a command's results to the end: its rows, or the first error.
    func finishCommand(sql: String?) throws -> PostgresRows {
        let pgconn = try handle()
        var outcome: Result<PostgresRows, any Error>?
        while let result = PQgetResult(pgconn) {
            defer { PQclear(result) }
            let current = Result { try rows(from: result, sql: sql) }
            if case .failure = outcome {} else { outcome = current }
        }
        guard let outcome else { throw error(from: nil, sql: sql) }
        return try outcome.get()
    }

    /// The error for a failed libpq COPY call.
    func copyError(_ what: String, sql: String?) -> PostgresError {
        let message = pgconn.map(Self.errorMessage(of:)) ?? "the connection is closed"
        return PostgresError(code: isAlive ? .copyFailed : .connectionLost, message: "\(what): \(message)", sql: sql)
    }

    /// Asks the server to cancel the running statement (`PQcancel`); failures are only logged.
    func cancelRunningQuery() {
        guard let pgconn, let cancel = PQgetCancel(pgconn) else { return }
        defer { PQfreeCancel(cancel) }
        var message = [CChar](repeating: 0, count: 256)
        if PQcancel(cancel, &message, Int32(message.count)) != 1 {
            let text = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            logger.warning("could not cancel the running statement: \(text)")
        }
    }
}

/// Buffers COPY data and hands it to libpq in large chunks. Lives only during one `copyIn`.
final class CopyInSink {
    let connection: Connection
    let pgconn: OpaquePointer
    var buffer: [UInt8] = []
    static let chunkSize = 256 * 1024

    init(connection: Connection, pgconn: OpaquePointer) {
        self.connection = connection
        self.pgconn = pgconn
        buffer.reserveCapacity(Self.chunkSize + 4096)
    }

    func flushIfFull() throws {
        if buffer.count >= Self.chunkSize { try flush() }
    }

    func flush() throws {
        guard !buffer.isEmpty else { return }
        let status = buffer.withUnsafeBytes { raw in
            PQputCopyData(pgconn, raw.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(raw.count))
        }
        guard status == 1 else { throw connection.copyError("could not send COPY data", sql: nil) }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Writes COPY data during ``Connection/copyIn(_:_:)``. Valid only inside that call's closure.
public struct CopyInWriter {
    let sink: CopyInSink

    /// Writes raw COPY data (any format the COPY statement named).
    public func write(_ bytes: [UInt8]) throws {
        sink.buffer.append(contentsOf: bytes)
        try sink.flushIfFull()
    }

    /// Writes one row in COPY's text format: tab-separated, `\N` for NULL, and backslash,
    /// tab, newline and carriage return escaped. Throws `.encoding` for a NUL character.
    public func writeRow(_ fields: [String?]) throws {
        // The buffer is moved out of the sink for the row: appending through the class's
        // property checked exclusive access on every byte (9% of a rebuild's CPU, perf).
        var buffer: [UInt8] = []
        swap(&buffer, &sink.buffer)
        do {
            try Self.append(fields, to: &buffer)
        } catch {
            swap(&buffer, &sink.buffer)
            throw error
        }
        swap(&buffer, &sink.buffer)
        try sink.flushIfFull()
    }

    private static func append(_ fields: [String?], to buffer: inout [UInt8]) throws {
        for (index, field) in fields.enumerated() {
            if index > 0 { buffer.append(UInt8(ascii: "\t")) }
            guard let field else {
                buffer.append(UInt8(ascii: "\\"))
                buffer.append(UInt8(ascii: "N"))
                continue
            }
            let utf8 = field.utf8
            guard utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\\") }) else {
                buffer.append(contentsOf: utf8)
                continue
            }
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\\"): buffer.append(UInt8(ascii: "\\")); buffer.append(UInt8(ascii: "\\"))
                case UInt8(ascii: "\t"): buffer.append(UInt8(ascii: "\\")); buffer.append(UInt8(ascii: "t"))
                case UInt8(ascii: "\n"): buffer.append(UInt8(ascii: "\\")); buffer.append(UInt8(ascii: "n"))
                case UInt8(ascii: "\r"): buffer.append(UInt8(ascii: "\\")); buffer.append(UInt8(ascii: "r"))
                case 0:
                    throw PostgresError(code: .encoding, message: "a COPY field holds a NUL character, which PostgreSQL text cannot hold")
                default: buffer.append(byte)
                }
            }
        }
        buffer.append(UInt8(ascii: "\n"))
    }
}
