import CLibPQ

/// Reads and writes libpq connection strings (`key=value …` or `postgres://` URIs) with libpq's
/// own parser, so quoting and URI decoding are exactly libpq's.
public enum Conninfo {
    /// The settings a conninfo string or URI holds, in libpq's keyword order.
    public static func parse(_ conninfo: String) throws -> [(keyword: String, value: String)] {
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo, &errorMessage) else {
            // libpq's message quotes the offending fragment, which may hold a password: not kept.
            if let errorMessage { PQfreemem(errorMessage) }
            throw PostgresError(code: .connectionFailed, message: "the connection string is not valid conninfo or URI")
        }
        defer { PQconninfoFree(options) }
        var result = [(keyword: String, value: String)]()
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val {
                result.append((String(cString: keyword), String(cString: value)))
            }
            option += 1
        }
        return result
    }

    /// A `key='value' …` string of settings, quoted as libpq expects.
    public static func format(_ settings: [(keyword: String, value: String)]) -> String {
        settings.map { setting in
            let escaped = setting.value.replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "'", with: "\\'")
            return "\(setting.keyword)='\(escaped)'"
        }.joined(separator: " ")
    }

    /// `conninfo` with one setting replaced or added, as a `key='value'` string.
    public static func setting(_ keyword: String, to value: String, in conninfo: String) throws -> String {
        var settings = try parse(conninfo).filter { $0.keyword != keyword }
        settings.append((keyword, value))
        return format(settings)
    }

    /// `conninfo` with server settings added to its `options` (e.g. `-c search_path=ledger`),
    /// after any it already has.
    public static func addingOptions(_ options: String, to conninfo: String) throws -> String {
        let existing = try parse(conninfo).first { $0.keyword == "options" }?.value ?? ""
        return try setting("options", to: existing.isEmpty ? options : existing + " " + options, in: conninfo)
    }
}
