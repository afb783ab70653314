import Postgres
import TestSupport
import Testing

@Suite("Array parameters")
struct ArrayParameterTests {
    @Test("text elements come back exactly, NULL only where nil")
    func textElements() async throws {
        let values: [String?] = [#"a "quoted" \ back\slash"#, "{braces},commas", "NULL", "", nil, "émoji 🧾", " spaced "]
        try await TestDatabase.withSchema { _, pool in
            let rows = try await pool.withConnection { connection in
                try connection.query("SELECT e FROM unnest(\(PostgresArray(values))::text[]) WITH ORDINALITY AS t(e, n) ORDER BY n")
                    .map { try $0.decode(0, as: String?.self) }
            }
            #expect(rows == values)
        }
    }

    @Test("integer elements, with NULLs, bind as one parameter")
    func integerElements() async throws {
        let values: [Int64?] = [.min, -1, 0, nil, .max]
        try await TestDatabase.withSchema { _, pool in
            let rows = try await pool.withConnection { connection in
                try connection.query("SELECT e FROM unnest(\(PostgresArray(values))::bigint[]) WITH ORDINALITY AS t(e, n) ORDER BY n")
                    .map { try $0.decode(0, as: Int64?.self) }
            }
            #expect(rows == values)
        }
    }
}
