/// The values of one result, copied out of libpq's `PGresult` into one buffer (the `PGresult`
/// is cleared right after). Immutable, hence `Sendable`.
final class ResultStorage: Sendable {
    let columnNames: [String]
    let columnTypes: [PostgresType]
    let columnFormats: [PostgresFormat]
    let columnIndex: [String: Int]
    let rowCount: Int
    /// All values, back to back.
    let buffer: [UInt8]
    /// Start of each cell in `buffer` (row-major), or -1 for NULL; `ends` holds the ends.
    let starts: [Int]
    let ends: [Int]

    init(
        columnNames: [String], columnTypes: [PostgresType], columnFormats: [PostgresFormat],
        rowCount: Int, buffer: [UInt8], starts: [Int], ends: [Int]
    ) {
        self.columnNames = columnNames
        self.columnTypes = columnTypes
        self.columnFormats = columnFormats
        var index = [String: Int]()
        for (offset, name) in columnNames.enumerated() where index[name] == nil {
            index[name] = offset  // the first column of a duplicated name wins
        }
        self.columnIndex = index
        self.rowCount = rowCount
        self.buffer = buffer
        self.starts = starts
        self.ends = ends
    }

    static let empty = ResultStorage(
        columnNames: [], columnTypes: [], columnFormats: [], rowCount: 0, buffer: [], starts: [], ends: [])
}

/// One row of a result.
public struct PostgresRow: Sendable {
    let storage: ResultStorage
    let row: Int

    public var count: Int { storage.columnNames.count }
    public var columnNames: [String] { storage.columnNames }

    /// The cell at a column index. Traps when out of range, like an array; see ``cell(_:)-swift.method``.
    public subscript(_ column: Int) -> PostgresCell {
        precondition(column >= 0 && column < storage.columnNames.count, "column index \(column) out of range")
        let cellIndex = row * storage.columnNames.count + column
        let start = storage.starts[cellIndex]
        return PostgresCell(
            type: storage.columnTypes[column],
            format: storage.columnFormats[column],
            columnName: storage.columnNames[column],
            bytes: start < 0 ? nil : storage.buffer[start..<storage.ends[cellIndex]]
        )
    }

    /// The cell of the named column (the first, if several have the name). Traps when there is
    /// none; use ``decode(_:as:)-(String,_)`` to get an error instead.
    public subscript(_ name: String) -> PostgresCell {
        guard let column = storage.columnIndex[name] else {
            preconditionFailure("no column named \"\(name)\"")
        }
        return self[column]
    }

    /// The cell of a column index, or a `.columnNotFound` error.
    public func cell(_ column: Int) throws -> PostgresCell {
        guard column >= 0 && column < storage.columnNames.count else {
            throw PostgresError(code: .columnNotFound, message: "no column at index \(column) (the row has \(count))")
        }
        return self[column]
    }

    /// The cell of a column name, or a `.columnNotFound` error.
    public func cell(_ name: String) throws -> PostgresCell {
        guard let column = storage.columnIndex[name] else {
            throw PostgresError(code: .columnNotFound, message: "no column named \"\(name)\"")
        }
        return self[column]
    }

    public func decode<T: PostgresDecodable>(_ column: Int, as: T.Type = T.self) throws -> T {
        try T(postgresCell: cell(column))
    }

    public func decode<T: PostgresDecodable>(_ name: String, as: T.Type = T.self) throws -> T {
        try T(postgresCell: cell(name))
    }
}

/// The rows of a result, with its column names and the affected-row count.
public struct PostgresRows: Sendable, RandomAccessCollection {
    let storage: ResultStorage
    /// The number of rows inserted, updated, deleted, copied or selected (`PQcmdTuples`); 0 when
    /// the command reports none.
    public let affectedRows: Int

    init(storage: ResultStorage, affectedRows: Int) {
        self.storage = storage
        self.affectedRows = affectedRows
    }

    public var columnNames: [String] { storage.columnNames }
    public var columnTypes: [PostgresType] { storage.columnTypes }

    public var startIndex: Int { 0 }
    public var endIndex: Int { storage.rowCount }
    public subscript(position: Int) -> PostgresRow {
        precondition(position >= 0 && position < storage.rowCount, "row index out of range")
        return PostgresRow(storage: storage, row: position)
    }

    /// The only row's first column decoded, or nil when there is no row.
    public func scalar<T: PostgresDecodable>(_ type: T.Type = T.self) throws -> T? {
        guard let row = first else { return nil }
        return try row.decode(0, as: T.self)
    }
}
