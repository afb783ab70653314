import AppStore
import AppStoreClient
import AsyncHTTPClient
import EventStore
import Foundation
import Ledger
import LedgerConsole
import LedgerHTTP
import LedgerProjections
import LedgerQueries
import LedgerService
import LedgerStore
import Logging
import NIOCore
import NIOHTTP1
import Postgres
import X509

/// `Tools/bench console`: each console page's latency (p50/p99, sequential requests by a signed-in
/// finance session) on the log `replay-grow` made, beside the JSON route that serves the same
/// figures, so what the page adds (rendering, its own queries) is seen apart from the data.
enum ConsoleBench {
    static let finance = "bench-finance-token-0123"

    struct Probe {
        var name: String
        var page: String
        var json: String?
    }

    static func run(conninfo: String, requests: Int) async throws {
        var logger = Logger(label: "bench.console")
        logger.logLevel = .error
        // The projections are brought to the head first, as a server that has been running would be.
        let pool = ConnectionPool(conninfo: conninfo, maxConnections: 2, logger: logger)
        let store = EventStore(pool: pool, logger: logger)
        let runner = ProjectionRunner(store: store, conninfo: conninfo, pageSize: 2_000, logger: logger)
        try await runner.catchUp()
        let events = try await store.headPosition()
        let purchases = try await LedgerReads(pool: pool).eventCount(ofType: "OrderCreated")
        await pool.close()
        // "Now" is just after the last purchase of the grown log, so subscriptions are a mix of
        // active, expired and renewed.
        let now = 1_767_225_600_000 + purchases * 60_000
        var configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, conninfo: conninfo, tokens: try APITokens(parsing: "\(finance):finance"),
            ledger: LedgerConfiguration(bundleId: "com.example.app"),
            verifyReceipt: VerifyReceiptConfiguration(productionURL: "http://127.0.0.1:9/verifyReceipt", sandboxURL: "http://127.0.0.1:9/verifyReceipt"),
            rootCertificates: [], poolSize: 8, clock: .fixed(now), machineClock: .system)
        configuration.consoleInsecureCookies = true
        configuration.ledger.reconcileInterval = nil
        let server = try await LedgerServer(configuration: configuration, logger: logger).start()
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        do {
            let cookie = try await signIn(client, base: server.baseURL)
            let report = try await importReport(client, base: server.baseURL, cookie: cookie)
            let n = purchases / 2
            let transaction = String(2_000_000_000_000 + n * 4)
            let user = "user-\(n % ReplayBench.users)"
            let last = RevenueDay.of(now)
            let probes = [
                Probe(name: "revenue by day, 90 days", page: "/console/revenue?from=2026-01-01&to=\(last)&group_by=day&environment=Production",
                      json: "/v1/reports/revenue?from=2026-01-01&to=\(last)&group_by=day"),
                Probe(name: "revenue by product", page: "/console/revenue?from=2026-01-01&to=\(last)&group_by=product&environment=Production",
                      json: "/v1/reports/revenue?from=2026-01-01&to=\(last)&group_by=product"),
                Probe(name: "subscriptions", page: "/console/subscriptions", json: nil),
                Probe(name: "look-up, a transaction", page: "/console/lookup?q=\(transaction)", json: "/v1/timelines/transactions/\(transaction)"),
                Probe(name: "look-up, a user", page: "/console/lookup?q=\(user)", json: "/v1/timelines/users/\(user)"),
                Probe(name: "reconciliation of a day", page: "/console/reconciliation/\(report)", json: nil),
            ]
            // BENCH_CONSOLE_PAGES: only the probes whose name contains it ("look-up" at
            // 20,000,000 events, where a revenue page over the whole log takes seconds).
            let only = ProcessInfo.processInfo.environment["BENCH_CONSOLE_PAGES"]
            let chosen = probes.filter { probe in only.map { probe.name.contains($0) } ?? true }
            print("console pages at \(events) events (\(purchases) purchases), \(requests) sequential requests each after 3 warm-up")
            print("page".padding(toLength: 28, withPad: " ", startingAt: 0) + "      p50 ms     p99 ms   |  JSON route p50 ms   p99 ms")
            for probe in chosen {
                let page = try await measure(client, server.baseURL + probe.page, cookie: cookie, requests: requests)
                var line = probe.name.padding(toLength: 28, withPad: " ", startingAt: 0) + String(format: "  %10.1f %10.1f   |", page.p50, page.p99)
                if let json = probe.json {
                    let api = try await measure(client, server.baseURL + json, bearer: finance, requests: requests)
                    line += String(format: "  %15.1f %8.1f", api.p50, api.p99)
                } else {
                    line += "  (no JSON route)"
                }
                print(line)
                if probe.name == "look-up, a user" { try await lookupParts(server.reads, user: user, requests: requests) }
            }
        } catch {
            try? await client.shutdown()
            try? await server.stop()
            throw error
        }
        try await client.shutdown()
        try await server.stop()
    }

    /// A user's look-up page taken apart, each part called in the server's process as the page
    /// calls it, so what the page adds beyond them (its rendering, HTTP) is seen by difference.
    static func lookupParts(_ reads: ReadModels, user: String, requests: Int) async throws {
        func timed(_ name: String, _ part: () async throws -> Void) async throws {
            var latencies: [Duration] = []
            for index in 0..<(requests + 3) {
                let started = ContinuousClock.now
                try await part()
                if index >= 3 { latencies.append(ContinuousClock.now - started) }
            }
            let (p50, p99) = ReadBench.percentiles(latencies)
            // The bench's table, on its standard output like every other line of it.
            print("  " + name.padding(toLength: 26, withPad: " ", startingAt: 0) + String(format: "  %10.1f %10.1f", p50, p99))
        }
        // What the page's first window shows in full, by the page's own rule.
        let shown = LookupPage.shown(before: nil)
        var originals: [String] = [], seen: Set<String> = []
        for entry in try await reads.timeline(.user, user)?.entries ?? [] where originals.count < 20 {
            if let original = entry.originalTransactionId, seen.insert(original).inserted { originals.append(original) }
        }
        try await timed("its timeline, 100 shown") { _ = try await reads.timeline(.user, user, shown: shown) }
        try await timed("its view (balances...)") { _ = try await reads.user(user) }
        try await timed("ownership of \(originals.count) purchases") { _ = try await reads.ownerships(originals) }
    }

    static func measure(_ client: HTTPClient, _ url: String, cookie: String? = nil, bearer: String? = nil, requests: Int) async throws -> (p50: Double, p99: Double) {
        var latencies: [Double] = []
        for index in 0..<(requests + 3) {
            var request = HTTPClientRequest(url: url)
            if let cookie { request.headers.add(name: "Cookie", value: cookie) }
            if let bearer { request.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
            let started = ContinuousClock.now
            let response = try await client.execute(request, timeout: .seconds(120))
            _ = try await response.body.collect(upTo: 64 << 20)
            let elapsed = (ContinuousClock.now - started).seconds * 1_000
            guard response.status == .ok else { throw BenchError("\(url) answered \(response.status.code)") }
            if index >= 3 { latencies.append(elapsed) }
        }
        latencies.sort()
        return (latencies[latencies.count / 2], latencies[min(latencies.count - 1, latencies.count * 99 / 100)])
    }

    static func signIn(_ client: HTTPClient, base: String) async throws -> String {
        let form = try await client.execute(HTTPClientRequest(url: base + "/console/sign-in"), timeout: .seconds(30))
        let html = String(buffer: try await form.body.collect(upTo: 1 << 20))
        guard let preCookie = form.headers["Set-Cookie"].first?.split(separator: ";").first,
              let range = html.range(of: "name=\"csrf\" value=\""),
              let end = html[range.upperBound...].firstIndex(of: "\"")
        else { throw BenchError("no sign-in form") }
        var request = HTTPClientRequest(url: base + "/console/sign-in")
        request.method = .POST
        request.headers.add(name: "Cookie", value: String(preCookie))
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: "token=\(finance)&csrf=\(html[range.upperBound..<end])"))
        let answer = try await client.execute(request, timeout: .seconds(30))
        guard let session = answer.headers["Set-Cookie"].first(where: { $0.hasPrefix("pl_console=") })?.split(separator: ";").first else {
            throw BenchError("sign-in answered \(answer.status.code)")
        }
        return String(session)
    }

    /// A sales summary for one Pacific day of the grown log, as App Store Connect would write
    /// it, through the console's upload form; returns its sha256.
    static func importReport(_ client: HTTPClient, base: String, cookie: String) async throws -> String {
        let page = try await client.execute({ var r = HTTPClientRequest(url: base + "/console/reconciliation"); r.headers.add(name: "Cookie", value: cookie); return r }(), timeout: .seconds(30))
        let html = String(buffer: try await page.body.collect(upTo: 1 << 20))
        guard let range = html.range(of: "name=\"csrf\" value=\""), let end = html[range.upperBound...].firstIndex(of: "\"") else {
            throw BenchError("no reconciliation form")
        }
        let header = "Provider\tProvider Country\tSKU\tDeveloper\tTitle\tVersion\tProduct Type Identifier\tUnits\tDeveloper Proceeds\tBegin Date\tEnd Date\tCustomer Currency\tCountry Code\tCurrency of Proceeds\tApple Identifier\tCustomer Price\tPromo Code\tParent Identifier\tSubscription\tPeriod\tCategory\tCMB\tDevice\tSupported Platforms\tProceeds Reason\tPreserved Pricing\tClient\tOrder Type"
        func line(_ sku: String, _ type: String, _ units: Int, _ price: String) -> String {
            "APPLE\tUS\t\(sku)\tDev\t\(sku)\t\t\(type)\t\(units)\t0.69\t01/15/2026\t01/15/2026\tUSD\tUS\tUSD\t1234567890\t\(price)\t\t\t\t\tGames\t\tiPhone\tiOS\t\t\t\t"
        }
        let report = [header, line("com.example.coins100", "IA1", 1_150, "0.99"), line("com.example.pro.monthly", "IAY", 240, "4.99"),
                      line("com.example.removeads", "IA1", 55, "2.99")].joined(separator: "\n") + "\n"
        let boundary = "bench-\(UUID().uuidString)"
        var body = "--\(boundary)\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n\(html[range.upperBound..<end])\r\n"
        body += "--\(boundary)\r\nContent-Disposition: form-data; name=\"report\"; filename=\"S_D_20260115.txt\"\r\n\r\n\(report)\r\n--\(boundary)--\r\n"
        var request = HTTPClientRequest(url: base + "/console/reconciliation")
        request.method = .POST
        request.headers.add(name: "Cookie", value: cookie)
        request.headers.add(name: "Content-Type", value: "multipart/form-data; boundary=\(boundary)")
        request.body = .bytes(ByteBuffer(string: body))
        let answer = try await client.execute(request, timeout: .seconds(60))
        guard let location = answer.headers["Location"].first, let sha = location.split(separator: "/").last?.split(separator: "?").first else {
            throw BenchError("the report upload answered \(answer.status.code)")
        }
        return String(sha)
    }
}
