import Foundation

/// One endpoint of `LEDGER_WEBHOOKS` (`name=url`): a receiver that gets every message.
public struct WebhookEndpoint: Sendable, Hashable {
    public let name: String
    public let url: URL

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    public init(name: String, url: URL) {
        self.name = name
        self.url = url
    }

    /// Parses `LEDGER_WEBHOOKS`: a comma list of `name=url`, names `[a-z0-9_-]+` and distinct,
    /// URLs http or https.
    public static func parse(_ text: String) throws -> [WebhookEndpoint] {
        var endpoints: [WebhookEndpoint] = []
        for item in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !item.isEmpty {
            guard let equals = item.firstIndex(of: "=") else {
                throw Invalid(description: "LEDGER_WEBHOOKS: '\(item)' is not name=url")
            }
            let name = String(item[..<equals])
            let address = String(item[item.index(after: equals)...])
            guard !name.isEmpty, name.utf8.allSatisfy({ (97...122).contains($0) || (48...57).contains($0) || $0 == 95 || $0 == 45 }) else {
                throw Invalid(description: "LEDGER_WEBHOOKS: the name '\(name)' must match [a-z0-9_-]+")
            }
            guard let url = URL(string: address), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
                throw Invalid(description: "LEDGER_WEBHOOKS: '\(address)' of \(name) is not an http or https URL")
            }
            guard !endpoints.contains(where: { $0.name == name }) else {
                throw Invalid(description: "LEDGER_WEBHOOKS: the name \(name) is given twice")
            }
            endpoints.append(WebhookEndpoint(name: name, url: url))
        }
        return endpoints
    }
}

/// When a failed message is tried again: the first retry within 2 s, then doubling up to an
/// hour, each delay drawn between half and all of its step so that the messages of an endpoint
/// that came back do not all arrive in the same second.
public enum WebhookBackoff {
    public static let ceiling: Duration = .seconds(3_600)

    /// The delay after the `attempts`-th failed attempt (1 for the first), given `unit` drawn
    /// uniformly from [0, 1).
    public static func delay(afterAttempts attempts: Int, unit: Double) -> Duration {
        let step = min(3_600.0, pow(2.0, Double(max(1, min(attempts, 20)))))
        let seconds = step * (0.5 + 0.5 * min(max(unit, 0), 1))
        return .milliseconds(Int64(seconds * 1_000))
    }
}
