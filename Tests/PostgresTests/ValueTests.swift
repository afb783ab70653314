import Foundation
import Postgres
import Primitives
import TestSupport
import Testing

@Suite("Values round-trip through PostgreSQL")
struct ValueTests {
    @Test("unicode text, including emoji and combining marks, comes back unchanged")
    func unicode() async throws {
        let samples = [
            "", "plain", "naïve café", "日本語のテキスト", "🧾💸👩‍👩‍👧‍👦🏳️‍🌈", "e\u{301}",
            "tab\tnewline\nbackslash\\quote'double\"", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \u{10FFFF}",
        ]
        try await TestDatabase.withSchema { _, pool in
            let (back, lengths) = try await pool.withConnection { connection in
                try connection.execute("CREATE TABLE texts (i int PRIMARY KEY, s text NOT NULL)")
                for (index, sample) in samples.enumerated() {
                    try connection.execute("INSERT INTO texts VALUES (\(Int32(index)), \(sample))")
                }
                let rows = try connection.query("SELECT s, char_length(s) AS n FROM texts ORDER BY i")
                return (try rows.map { try $0.decode("s", as: String.self) }, try rows.map { try $0.decode("n", as: Int.self) })
            }
            #expect(back == samples)
            #expect(lengths == samples.map { $0.unicodeScalars.count })
        }
    }

    @Test("a NUL in text is refused before it is sent, not truncated")
    func nulRefused() async throws {
        try await TestDatabase.withSchema { _, pool in
            await #expect(throws: PostgresError.self) {
                try await pool.withConnection { try $0.query("SELECT \("a\u{0}b")") }
            }
            let one = try await pool.scalar("SELECT 1", as: Int.self)
            #expect(one == 1)
        }
    }

    @Test("NULLs decode as nil, and as an error for non-optional types")
    func nulls() async throws {
        try await TestDatabase.withSchema { _, pool in
            let row = try await pool.withConnection { connection in
                try connection.query("""
                    SELECT \(nil as Int?) AS i, \(nil as String?) AS s, \(nil as Date?) AS d,
                           \(nil as UUID?) AS u, \(nil as JSONB?) AS j, \(nil as [UInt8]?) AS b, \(nil as Bool?) AS f
                    """)[0]
            }
            #expect(try row.decode("i", as: Int?.self) == nil)
            #expect(try row.decode("s", as: String?.self) == nil)
            #expect(try row.decode("d", as: Date?.self) == nil)
            #expect(try row.decode("u", as: UUID?.self) == nil)
            #expect(try row.decode("j", as: JSONB?.self) == nil)
            #expect(try row.decode("b", as: [UInt8]?.self) == nil)
            #expect(try row.decode("f", as: Bool?.self) == nil)
            #expect(row["d"].type == .timestamptz)
            #expect(row["u"].type == .uuid)
            let error = #expect(throws: PostgresError.self) { try row.decode("i", as: Int.self) }
            #expect(error?.code == .unexpectedNull)
            #expect(throws: PostgresError.self) { try row.decode("missing", as: Int?.self) }
        }
    }

    @Test("bytea keeps all 256 byte values")
    func bytea() async throws {
        let bytes = (0...255).map(UInt8.init) + (0...255).reversed().map(UInt8.init)
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        try await TestDatabase.withSchema { _, pool in
            let (back, data, serverHex) = try await pool.withConnection { connection in
                try connection.execute("CREATE TABLE blobs (b bytea NOT NULL)")
                try connection.execute("INSERT INTO blobs VALUES (\(bytes)), (\(Data(bytes)))")
                let rows = try connection.query("SELECT b, encode(b, 'hex') AS h FROM blobs")
                return (try rows[0].decode("b", as: [UInt8].self), try rows[1].decode("b", as: Data.self), try rows[0].decode("h", as: String.self))
            }
            #expect(back == bytes)
            #expect(data == Data(bytes))
            #expect(serverHex == hex)
        }
    }

    @Test("timestamptz keeps microseconds exactly", arguments: [
        Int64(1_700_000_000_123_456), 0, -1, 1, 999_999, -1_234_567_890_123_457,
        253_402_300_799_999_999, -62_135_596_800_000_001, 4_102_444_800_000_001,
    ])
    func timestampMicroseconds(micros: Int64) async throws {
        let timestamp = PostgresTimestamp(microsecondsSince1970: micros)
        try await TestDatabase.withSchema { _, pool in
            let (back, serverMicros, inKolkata, asDate) = try await pool.withConnection { connection in
                try connection.execute("CREATE TABLE times (t timestamptz NOT NULL)")
                try connection.execute("INSERT INTO times VALUES (\(timestamp))")
                let back = try connection.query("SELECT t FROM times").scalar(PostgresTimestamp.self)
                let serverMicros = try connection.query("SELECT (extract(epoch FROM t) * 1000000)::int8 FROM times").scalar(Int64.self)
                // Another session time zone: the text carries +05:30 and must still parse exactly.
                try connection.execute("SET TimeZone = 'Asia/Kolkata'")
                let inKolkata = try connection.query("SELECT t FROM times").scalar(PostgresTimestamp.self)
                let asDate = try connection.query("SELECT t FROM times").scalar(Date.self)
                try connection.execute("SET TimeZone = 'UTC'")
                return (back, serverMicros, inKolkata, asDate)
            }
            #expect(back == timestamp)
            #expect(serverMicros == micros)
            #expect(inKolkata == timestamp)
            // A Date (a Double of seconds) holds microseconds exactly only within a few centuries of 2001.
            if abs(micros) < 10_000_000_000_000_000 {
                #expect(asDate.map(PostgresTimestamp.init) == timestamp)
            }
        }
    }

    @Test("a Date is stored to the microsecond")
    func dates() async throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.654321)
        try await TestDatabase.withSchema { _, pool in
            let micros = try await pool.scalar("SELECT (extract(epoch FROM \(date)) * 1000000)::int8", as: Int64.self)
            #expect(micros == 1_700_000_000_654_321)
            let back = try await pool.scalar("SELECT \(date)", as: Date.self)
            #expect(back.map(PostgresTimestamp.init)?.microsecondsSince1970 == 1_700_000_000_654_321)
        }
    }

    @Test("uuid round-trips and reads as PostgreSQL's text")
    func uuid() async throws {
        let id = UUID()
        try await TestDatabase.withSchema { _, pool in
            let (back, text) = try await pool.withConnection { connection in
                let row = try connection.query("SELECT \(id) AS u, \(id)::text AS t")[0]
                return (try row.decode("u", as: UUID.self), try row.decode("t", as: String.self))
            }
            #expect(back == id)
            #expect(text == id.uuidString.lowercased())
        }
    }

    @Test("integers, booleans and doubles keep their extremes")
    func numbers() async throws {
        try await TestDatabase.withSchema { _, pool in
            let row = try await pool.withConnection { connection in
                try connection.query("""
                    SELECT \(Int64.min) AS a, \(Int64.max) AS b, \(Int32.min) AS c, \(Int16.max) AS d,
                           \(true) AS e, \(false) AS f, \(Double.pi) AS g, \(-1e-300) AS h,
                           \(Double.infinity) AS i, \(Int.max) AS j, 7::int2 AS k
                    """)[0]
            }
            #expect(try row.decode("a", as: Int64.self) == .min)
            #expect(try row.decode("b", as: Int64.self) == .max)
            #expect(try row.decode("c", as: Int32.self) == .min)
            #expect(try row.decode("d", as: Int16.self) == .max)
            #expect(try row.decode("e", as: Bool.self) == true)
            #expect(try row.decode("f", as: Bool.self) == false)
            #expect(try row.decode("g", as: Double.self) == .pi)
            #expect(try row.decode("h", as: Double.self) == -1e-300)
            #expect(try row.decode("i", as: Double.self) == .infinity)
            #expect(try row.decode("j", as: Int.self) == .max)
            #expect(try row.decode("k", as: Int.self) == 7)
            #expect(throws: PostgresError.self) { try row.decode("b", as: Int32.self) }
        }
    }

    struct Payload: Codable, Equatable {
        var id: UUID
        var lines: [String]
        var amounts: [Int64]
    }

    @Test("a 1 MB jsonb payload round-trips")
    func bigJSONB() async throws {
        let payload = Payload(
            id: UUID(),
            lines: (0..<10_000).map { "line \($0): ünïcödé 🧾 \(String(repeating: "x", count: 60))" },
            amounts: (0..<10_000).map { Int64($0) * 1_000_003 })
        let jsonb = try JSONB(encoding: payload)
        #expect(jsonb.bytes.count > 1_000_000)
        try await TestDatabase.withSchema { _, pool in
            let (back, size) = try await pool.withConnection { connection in
                try connection.execute("CREATE TABLE docs (id int PRIMARY KEY, body jsonb NOT NULL)")
                try connection.execute("INSERT INTO docs VALUES (1, \(jsonb))")
                let row = try connection.query("SELECT body, octet_length(body::text) AS size FROM docs")[0]
                return (try row.decode("body", as: JSONB.self), try row.decode("size", as: Int.self))
            }
            #expect(size > 1_000_000)
            #expect(back.bytes.count == size)
            #expect(try back.decode(Payload.self) == payload)
        }
    }
}
