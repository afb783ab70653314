import Postgres
import TestSupport
import Testing

@Suite("COPY moves rows in bulk")
struct CopyTests {
    static func row(_ index: Int) -> [String?] {
        [String(index), "name \(index) ☃ tab\there back\\slash\nline\r🧾", index % 7 == 0 ? nil : "note \(index % 13)"]
    }

    /// Undoes COPY text-format escaping for one line (without its newline).
    static func parse(line: [UInt8]) -> [String?] {
        var fields = [String?]()
        var field = [UInt8]()
        var index = 0
        var isNull = false
        func finish() {
            fields.append(isNull ? nil : String(decoding: field, as: UTF8.self))
            field.removeAll()
            isNull = false
        }
        while index < line.count {
            let byte = line[index]
            if byte == UInt8(ascii: "\t") {
                finish()
            } else if byte == UInt8(ascii: "\\"), index + 1 < line.count {
                index += 1
                switch line[index] {
                case UInt8(ascii: "N"): isNull = true
                case UInt8(ascii: "t"): field.append(UInt8(ascii: "\t"))
                case UInt8(ascii: "n"): field.append(UInt8(ascii: "\n"))
                case UInt8(ascii: "r"): field.append(UInt8(ascii: "\r"))
                default: field.append(line[index])
                }
            } else {
                field.append(byte)
            }
            index += 1
        }
        finish()
        return fields
    }

    @Test("100,000 rows go in with COPY FROM STDIN and come back identical with COPY TO STDOUT")
    func roundTrip() async throws {
        let count = 100_000
        try await TestDatabase.withSchema { _, pool in
            let (copiedIn, copiedOut, mismatches, chunks) = try await pool.withConnection { connection in
                try connection.execute("CREATE TABLE bulk (id int8 PRIMARY KEY, name text NOT NULL, note text)")
                let copiedIn = try connection.copyIn("COPY bulk (id, name, note) FROM STDIN") { writer in
                    for index in 0..<count { try writer.writeRow(Self.row(index)) }
                }
                var next = 0, mismatches = 0, chunks = 0
                var pending = [UInt8]()
                let copiedOut = try connection.copyOut("COPY (SELECT id, name, note FROM bulk ORDER BY id) TO STDOUT") { chunk in
                    chunks += 1
                    pending += chunk
                    while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                        if Self.parse(line: Array(pending[..<newline])) != Self.row(next) { mismatches += 1 }
                        next += 1
                        pending.removeSubrange(...newline)
                    }
                }
                // Rows not seen, or a partial row left over, count as mismatches.
                mismatches += (count - next) + (pending.isEmpty ? 0 : 1)
                return (copiedIn, copiedOut, mismatches, chunks)
            }
            #expect(copiedIn == count)
            #expect(copiedOut == count)
            #expect(mismatches == 0)
            #expect(chunks >= count)  // streamed row by row, never one buffer
            let nulls = try await pool.scalar("SELECT count(*) FROM bulk WHERE note IS NULL", as: Int.self)
            #expect(nulls == (0..<count).filter { $0 % 7 == 0 }.count)
            let name = try await pool.scalar("SELECT name FROM bulk WHERE id = 12345", as: String.self)
            #expect(name == Self.row(12345)[1])
        }
    }

    @Test("a producer that throws aborts the COPY; nothing is stored and the connection stays usable")
    func abortedCopyIn() async throws {
        try await TestDatabase.withSchema { conninfo, _ in
            let pool = ConnectionPool(conninfo: conninfo, maxConnections: 1, logger: TestDatabase.logger)
            try await pool.withConnection { try $0.execute("CREATE TABLE bulk (id int8)") }
            await #expect(throws: ExpectedFailure.self) {
                try await pool.withConnection { connection in
                    try connection.copyIn("COPY bulk FROM STDIN") { writer in
                        for index in 0..<1000 { try writer.writeRow([String(index)]) }
                        throw ExpectedFailure()
                    }
                }
            }
            #expect(try await pool.scalar("SELECT count(*) FROM bulk", as: Int.self) == 0)
            await pool.close()
        }
    }

    @Test("a consumer that throws stops COPY TO STDOUT and the connection stays usable")
    func abortedCopyOut() async throws {
        try await TestDatabase.withSchema { conninfo, _ in
            let pool = ConnectionPool(conninfo: conninfo, maxConnections: 1, logger: TestDatabase.logger)
            await #expect(throws: ExpectedFailure.self) {
                try await pool.withConnection { connection in
                    try connection.copyOut("COPY (SELECT g FROM generate_series(1, 5000000) g) TO STDOUT") { _ in
                        throw ExpectedFailure()
                    }
                }
            }
            let two = try await pool.scalar("SELECT 2", as: Int.self)
            #expect(two == 2)
            await pool.close()
        }
    }

    @Test("query refuses a COPY statement and leaves the connection usable")
    func copyThroughQueryIsRefused() async throws {
        try await TestDatabase.withSchema { conninfo, _ in
            let pool = ConnectionPool(conninfo: conninfo, maxConnections: 1, logger: TestDatabase.logger)
            let error = await #expect(throws: PostgresError.self) {
                try await pool.withConnection { connection in
                    try connection.execute("CREATE TABLE bulk (id int8)")
                    try connection.execute("COPY bulk FROM STDIN")
                }
            }
            #expect(error?.code == .misuse)
            let count = try await pool.scalar("SELECT count(*) FROM bulk", as: Int.self)
            #expect(count == 0)
            await pool.close()
        }
    }
}
