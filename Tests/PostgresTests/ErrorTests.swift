import Foundation
import Postgres
import TestSupport
import Testing

@Suite("Server errors become typed errors with their SQLSTATE")
struct ErrorTests {
    @Test("a unique violation is caught as SQLState.uniqueViolation, with its constraint")
    func uniqueViolation() async throws {
        let secret = "secret-receipt-4711"
        try await TestDatabase.withSchema { _, pool in
            try await pool.withConnection { connection in
                try connection.execute("CREATE TABLE receipts (body text CONSTRAINT receipts_body_key UNIQUE)")
                try connection.execute("INSERT INTO receipts VALUES (\(secret))")
            }
            var caught: PostgresError?
            do {
                try await pool.withConnection { try $0.execute("INSERT INTO receipts VALUES (\(secret))") }
            } catch let error as PostgresError where SQLState.uniqueViolation ~= error {
                caught = error
            }
            let error = try #require(caught)
            #expect(error.code == .server)
            #expect(error.sqlState == .uniqueViolation)
            #expect(error.constraint == "receipts_body_key")
            #expect(error.table == "receipts")
            #expect(!error.isRetryable)
            #expect(error.description.contains("23505"))
            #expect(error.description.contains("receipts_body_key"))
            #expect(!error.description.contains(secret))
            #expect(!"\(error)".contains(secret))
            #expect(error.detail?.contains(secret) == true)  // the detail is for debugging only
            #expect(error.debugDescription.contains("INSERT INTO receipts VALUES ($1)"))
        }
    }

    @Test("a syntax error is caught as SQLState.syntaxError")
    func syntaxError() async throws {
        try await TestDatabase.withSchema { _, pool in
            var caught = false
            do {
                try await pool.withConnection { try $0.execute("SELEC 1") }
            } catch SQLState.syntaxError {
                caught = true
            }
            #expect(caught)
            #expect(try await pool.scalar("SELECT 1", as: Int.self) == 1)
        }
    }

    @Test("write skew between two SERIALIZABLE transactions is caught as SQLState.serializationFailure")
    func serializationFailure() async throws {
        try await TestDatabase.withSchema { conninfo, pool in
            let outcome: String = try await pool.withConnection { first in
                try first.execute("CREATE TABLE oncall (doctor text, shift int, on_duty bool)")
                try first.execute("INSERT INTO oncall VALUES ('alice', 1, true), ('bob', 1, true)")
                let second = try Connection.connect(conninfo, logger: TestDatabase.logger)
                defer { second.close() }
                // Each takes a doctor off duty after checking the other is still on duty.
                try first.execute("BEGIN ISOLATION LEVEL SERIALIZABLE")
                try second.execute("BEGIN ISOLATION LEVEL SERIALIZABLE")
                _ = try first.query("SELECT count(*) FROM oncall WHERE on_duty")
                _ = try second.query("SELECT count(*) FROM oncall WHERE on_duty")
                try first.execute("UPDATE oncall SET on_duty = false WHERE doctor = \("alice")")
                try second.execute("UPDATE oncall SET on_duty = false WHERE doctor = \("bob")")
                try first.execute("COMMIT")
                do {
                    try second.execute("COMMIT")
                    return "committed"
                } catch let error as PostgresError where SQLState.serializationFailure ~= error {
                    let retryable = error.isRetryable
                    return retryable ? "40001 retryable" : "40001"
                }
            }
            #expect(outcome == "40001 retryable")
        }
    }

    @Test("a data error's description hides the value it quotes")
    func invalidTextHidesValue() async throws {
        let secret = "hunter2-card-number"
        try await TestDatabase.withSchema { _, pool in
            let caught = await #expect(throws: PostgresError.self) {
                try await pool.withConnection { try $0.query("SELECT \(secret)::int") }
            }
            let error = try #require(caught)
            #expect(error.sqlState == .invalidTextRepresentation)
            #expect(SQLState.invalidTextRepresentation ~= error)
            #expect(!error.description.contains(secret))
            #expect(!error.debugDescription.contains(secret) || error.message.contains(secret))
        }
    }

    @Test("a failed connection names neither the password nor the conninfo")
    func connectionFailureHidesPassword() async throws {
        let password = "pa55-w0rd-never-shown"
        let conninfo = try Conninfo.format(
            Conninfo.parse(TestDatabase.adminConninfo).filter { $0.keyword != "user" }
                + [("user", "no_such_role"), ("password", password)])
        let pool = ConnectionPool(conninfo: conninfo, maxConnections: 1, logger: TestDatabase.logger)
        let caught = await #expect(throws: PostgresError.self) {
            try await pool.withConnection { try $0.query("SELECT 1") }
        }
        await pool.close()
        let error = try #require(caught)
        #expect(error.code == .connectionFailed)
        #expect(error.isConnectionError)
        for text in [error.description, error.debugDescription, error.message] {
            #expect(!text.contains(password))
            #expect(!text.contains("password="))
        }
        // A malformed URI's error does not echo it either.
        let uriError = #expect(throws: PostgresError.self) {
            try Conninfo.parse("postgres://user:\(password)@host:notaport/db?bad=\u{1}")
        }
        #expect(uriError?.description.contains(password) == false)
    }
}
