import Foundation
import Spawning
import Testing

/// What operators load into Prometheus and Grafana (deploy/): promtool accepts the alerting rules
/// and their unit tests pass (each alert fires on its series and not on the others); the rules
/// and the dashboard read only metrics the server exposes; docs/monitoring.md describes every
/// metric and has the runbook section each alert links to.
@Suite("Prometheus rules and Grafana dashboard")
struct PrometheusRulesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let rules = root.appendingPathComponent("deploy/prometheus/purchase-ledger-rules.yml")
    static let ruleTests = root.appendingPathComponent("deploy/prometheus/purchase-ledger-rules.test.yml")
    static let dashboard = root.appendingPathComponent("deploy/grafana/purchase-ledger.json")
    static let monitoring = root.appendingPathComponent("docs/monitoring.md")

    struct PromtoolMissing: Error, CustomStringConvertible {
        var description: String {
            "promtool is not installed: run the tests with Tools/test, which extracts it from Debian's prometheus package (Tools/lib/promtool.sh)"
        }
    }

    /// The promtool Tools/test provides (`PL_PROMTOOL`), else the first on PATH. Missing, the
    /// test fails: the rules are never shipped untested.
    static func promtool() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["PL_PROMTOOL"], !path.isEmpty { return path }
        for folder in (environment["PATH"] ?? "").split(separator: ":") {
            let path = "\(folder)/promtool"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        throw PromtoolMissing()
    }

    @Test("promtool check rules accepts the alerting rules")
    func checkRules() async throws {
        let (exit, output) = try await ChildProcess.run(try Self.promtool(), ["check", "rules", Self.rules.path])
        #expect(exit == .success, "\(output)")
        #expect(output.contains("SUCCESS"), "\(output)")
    }

    @Test("promtool test rules: every alert fires on its series and stays quiet on the others")
    func testRules() async throws {
        let (exit, output) = try await ChildProcess.run(try Self.promtool(), ["test", "rules", Self.ruleTests.path])
        #expect(exit == .success, "\(output)")
        #expect(output.contains("SUCCESS"), "\(output)")
        // Each alert is evaluated at least twice: once where it fires, once where it must not.
        let tests = try String(contentsOf: Self.ruleTests, encoding: .utf8)
        for alert in try Self.alerts() {
            let evaluations = tests.components(separatedBy: "\n").filter { $0.trimmingCharacters(in: .whitespaces) == "alertname: \(alert)" }
            #expect(evaluations.count >= 2, "\(alert) is tested \(evaluations.count) times")
        }
        #expect(tests.contains("exp_alerts: []"))
    }

    @Test("the rules and the dashboard read only metrics the server exposes")
    func metricsExist() throws {
        let exposed = try Self.exposedSeries()
        let ruled = try Self.metricsInRules()
        #expect(ruled.count >= 10, "\(ruled)")
        #expect(ruled.subtracting(exposed).isEmpty, "not exposed by /metrics: \(ruled.subtracting(exposed).sorted())")

        let data = try Data(contentsOf: Self.dashboard)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "the dashboard is a JSON object")
        let variables = ((object["templating"] as? [String: Any])?["list"] as? [[String: Any]]) ?? []
        #expect(variables.contains { $0["type"] as? String == "datasource" && $0["query"] as? String == "prometheus" }, "a data source variable")
        var queries: [String] = []
        Self.collect(["expr", "definition"], in: object, into: &queries)
        let charted = Set(queries.flatMap(Self.metricNames))
        #expect(charted.subtracting(exposed).isEmpty, "not exposed by /metrics: \(charted.subtracting(exposed).sorted())")
        // The dashboard shows what the alerts watch, and the requests' rate and latency.
        let histograms = try Self.registeredMetrics().histograms
        let watched = Set(ruled.map { Self.family($0, histograms) })
        let shown = Set(charted.map { Self.family($0, histograms) })
        #expect(watched.subtracting(shown).isEmpty, "alerted on, not charted: \(watched.subtracting(shown).sorted())")
        #expect(charted.contains("ledger_http_requests_total") && charted.contains("ledger_http_request_duration_seconds_bucket"))
    }

    @Test("docs/monitoring.md describes every metric and has the runbook section each alert links to")
    func documented() throws {
        let docs = try String(contentsOf: Self.monitoring, encoding: .utf8)
        for metric in try Self.registeredMetrics().names {
            #expect(docs.contains("`\(metric)`"), "\(metric) is not in docs/monitoring.md")
        }
        let headings = Set(docs.components(separatedBy: "\n").filter { $0.hasPrefix("#") }.map {
            $0.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
        })
        let text = try String(contentsOf: Self.rules, encoding: .utf8)
        let anchors = Self.matches(of: #"runbook_url: '.*docs/monitoring\.md#([a-z0-9-]+)'"#, in: text)
        let alerts = try Self.alerts()
        #expect(alerts.count == anchors.count, "one runbook_url per alert: \(alerts) \(anchors)")
        for (alert, anchor) in zip(alerts, anchors) {
            // GitHub's anchor of a heading: lower case, spaces as hyphens.
            #expect(anchor == alert.lowercased(), "\(alert) links to #\(anchor)")
            #expect(headings.contains(alert), "docs/monitoring.md has no heading \(alert)")
        }
        for severity in Self.matches(of: #"severity: ([a-z]+)"#, in: text) {
            #expect(["critical", "warning"].contains(severity))
        }
    }

    // MARK: - Reading the files

    /// The alerts of the rules file, in order.
    static func alerts() throws -> [String] {
        matches(of: #"- alert: ([A-Za-z0-9]+)"#, in: try String(contentsOf: rules, encoding: .utf8))
    }

    /// The metric names the rules' expressions and their annotations' queries read.
    static func metricsInRules() throws -> Set<String> {
        let lines = try String(contentsOf: rules, encoding: .utf8).components(separatedBy: "\n")
        var expressions: [String] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            index += 1
            guard let range = line.range(of: "expr:") else {
                // A query in an annotation's template: {{ printf "ledger_…{…}" … | query }}.
                expressions += matches(of: #"printf "([^"]+)""#, in: line)
                continue
            }
            let rest = line[range.upperBound...].trimmingCharacters(in: .whitespaces)
            guard rest == "|" || rest == ">" || rest == "|-" || rest == ">-" else {
                expressions.append(rest)
                continue
            }
            // A block scalar: the lines indented deeper than `expr:`.
            let indent = line.prefix { $0 == " " }.count
            while index < lines.count, lines[index].prefix(while: { $0 == " " }).count > indent || lines[index].isEmpty {
                expressions.append(lines[index])
                index += 1
            }
        }
        return Set(expressions.flatMap(metricNames))
    }

    /// `ledger_…` names in a PromQL expression (label values in quotes left out).
    static func metricNames(in expression: String) -> [String] {
        let unquoted = expression.replacingOccurrences(of: #""[^"]*""#, with: "\"\"", options: .regularExpression)
        return matches(of: #"(?<![A-Za-z0-9_])(ledger_[a-z0-9_]+)"#, in: unquoted)
    }

    /// The metric names the server registers (Sources/LedgerHTTP: the registry's counters,
    /// gauges and timers, and the families written as text), and which of them are histograms.
    static func registeredMetrics() throws -> (names: Set<String>, histograms: Set<String>) {
        let folder = root.appendingPathComponent("Sources/LedgerHTTP")
        var names: Set<String> = []
        var histograms: Set<String> = []
        let files = try #require(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil))
        for case let file as URL in files where file.pathExtension == "swift" {
            let source = try String(contentsOf: file, encoding: .utf8)
            names.formUnion(matches(of: #""(ledger_[a-z0-9_]+)""#, in: source))
            histograms.formUnion(matches(of: #"Timer\(label: "(ledger_[a-z0-9_]+)""#, in: source))
        }
        return (names, histograms)
    }

    /// The series names a scrape can hold: a histogram as its `_bucket`, `_sum` and `_count`.
    static func exposedSeries() throws -> Set<String> {
        let (names, histograms) = try registeredMetrics()
        #expect(names.count >= 20, "\(names)")
        return names.subtracting(histograms).union(histograms.flatMap { [$0 + "_bucket", $0 + "_sum", $0 + "_count"] })
    }

    /// The metric a series belongs to: a histogram's series named by the histogram.
    static func family(_ series: String, _ histograms: Set<String>) -> String {
        for suffix in ["_bucket", "_sum", "_count"] where series.hasSuffix(suffix) {
            let name = String(series.dropLast(suffix.count))
            if histograms.contains(name) { return name }
        }
        return series
    }

    static func collect(_ keys: Set<String>, in value: Any, into found: inout [String]) {
        if let object = value as? [String: Any] {
            for (key, inner) in object {
                if keys.contains(key), let text = inner as? String { found.append(text) } else { collect(keys, in: inner, into: &found) }
            }
        } else if let array = value as? [Any] {
            for inner in array { collect(keys, in: inner, into: &found) }
        }
    }

    /// The first capture group of each match of `pattern`.
    static func matches(of pattern: String, in text: String) -> [String] {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        let range = NSRange(text.startIndex..., in: text)
        return regex.matches(in: text, range: range).compactMap { Range($0.range(at: 1), in: text).map { String(text[$0]) } }
    }
}
