import Foundation

/// An `application/x-www-form-urlencoded` body or query, as an HTML form sends it.
struct ConsoleForm: Sendable {
    private(set) var fields: [String: String] = [:]

    init(urlEncoded text: String) {
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) -> String {
                String(s).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            guard let name = parts.first else { continue }
            fields[decode(name)] = parts.count > 1 ? decode(parts[1]) : ""
        }
    }

    subscript(name: String) -> String? { fields[name] }
}
