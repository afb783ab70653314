import Foundation
import Postgres
import Testing

@Suite("SQL binds interpolated values as parameters")
struct SQLTests {
    @Test("values become numbered placeholders, never text")
    func placeholders() {
        let name = "Robert'); DROP TABLE students;--"
        let id = 42
        let sql: SQL = "SELECT * FROM t WHERE name = \(name) AND id = \(id) AND deleted IS \(nil as Bool?)"
        #expect(sql.text == "SELECT * FROM t WHERE name = $1 AND id = $2 AND deleted IS $3")
        #expect(sql.bindings.count == 3)
        #expect(sql.bindings[0] == PostgresData(type: .text, text: name))
        #expect(sql.bindings[1] == PostgresData(type: .int8, text: "42"))
        #expect(sql.bindings[2] == .null(.bool))
        #expect(!sql.description.contains("DROP"))
    }

    @Test("a string literal interpolated is a parameter, not SQL")
    func literalIsParameter() {
        let sql: SQL = "SELECT \("1; DROP TABLE x")"
        #expect(sql.text == "SELECT $1")
    }

    @Test("identifiers are quoted with doubled quotes")
    func identifiers() {
        let sql: SQL = "LISTEN \(identifier: #"we"ird.Chan"#)"
        #expect(sql.text == #"LISTEN "we""ird.Chan""#)
        let bad: SQL = "SELECT * FROM \(identifier: "a\u{0}b")"
        #expect(bad.invalidReason != nil)
    }

    @Test("fragments keep their parameters, renumbered")
    func fragments() {
        let rows = [1, 2, 3].map { value -> SQL in "(\(value), \("n\(value)"))" }
        let sql: SQL = "INSERT INTO t VALUES \(fragment: SQL.join(rows, separator: ", ")) RETURNING \(unsafeRaw: "id")"
        #expect(sql.text == "INSERT INTO t VALUES ($1, $2), ($3, $4), ($5, $6) RETURNING id")
        #expect(sql.bindings.count == 6)
        #expect(sql.bindings[4] == PostgresData(type: .int8, text: "3"))
    }

    @Test("timestamps print and parse PostgreSQL's ISO form exactly", arguments: [
        (Int64(0), "1970-01-01 00:00:00.000000+00"),
        (Int64(1_700_000_000_123_456), "2023-11-14 22:13:20.123456+00"),
        (Int64(-1), "1969-12-31 23:59:59.999999+00"),
        (Int64(-62_135_596_800_000_000), "0001-01-01 00:00:00.000000+00"),
        (Int64(-62_135_596_800_000_001), "0001-12-31 23:59:59.999999+00 BC"),
        (Int64(253_402_300_799_999_999), "9999-12-31 23:59:59.999999+00"),
    ])
    func timestampText(micros: Int64, text: String) {
        let timestamp = PostgresTimestamp(microsecondsSince1970: micros)
        #expect(timestamp.description == text)
        #expect(PostgresTimestamp(postgresText: Array(text.utf8)) == timestamp)
    }

    @Test("timestamps parse with offsets and short fractions")
    func timestampOffsets() {
        func parse(_ text: String) -> Int64? { PostgresTimestamp(postgresText: Array(text.utf8))?.microsecondsSince1970 }
        #expect(parse("2023-11-15 03:43:20.123456+05:30") == 1_700_000_000_123_456)
        #expect(parse("2023-11-14 19:13:20.1-03") == 1_700_000_000_100_000)
        #expect(parse("2023-11-14 22:13:20+00") == 1_700_000_000_000_000)
        #expect(parse("infinity") == .max)
        #expect(parse("2023-11-14 22:13:20.1234567+00") == nil)
        #expect(parse("not a time") == nil)
    }
}

