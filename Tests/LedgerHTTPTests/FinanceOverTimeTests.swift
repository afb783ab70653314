import AppleSimulator
import Foundation
import Ledger
import LedgerProjections
@testable import LedgerQueries
import Postgres
import Logging
import Testing

/// Four months of subscriptions lived through on the simulator (purchases through the API,
/// renewals, billing failures, expiries and refunds told by Apple's signed notifications), and
/// every figure of the three reports checked against a model written here, from the scenario's
/// own dates, not from the ledger's rules. A replay then gives byte-identical reports.
@Suite("Finance over time: subscriptions, cohorts and refunds over four months")
struct FinanceOverTimeTests {
    static let quiet: Logger = {
        var logger = Logger(label: "tests.finance-over-time")
        logger.logLevel = .warning
        return logger
    }()

    static let monthly = "com.example.pro.monthly"
    static let yearly = "com.example.pro.yearly"
    static let day: Int64 = 86_400_000

    /// Noon UTC of a 2026 day, `MM-DD`: every step of the scenario happens at noon.
    static func noon(_ monthDay: String) -> Int64 {
        let parts = monthDay.split(separator: "-").compactMap { Int64($0) }
        let days = ReportPeriodProbe.days(year: 2026, month: parts[0], day: parts[1])
        return days * day + day / 2
    }

    // MARK: - The model

    /// A subscription as the scenario lived it: its states, from the scenario's dates.
    struct Life {
        var name: String
        var spans: [(state: String, from: Int64, to: Int64?, price: Int64?)]

        func span(at t: Int64) -> (state: String, from: Int64, to: Int64?, price: Int64?)? {
            spans.first { $0.from <= t && ($0.to.map { t < $0 } ?? true) }
        }
        func access(at t: Int64) -> Bool { ["trial", "active", "grace"].contains(span(at: t)?.state ?? "") }
        func paid(at t: Int64) -> Bool { ["active", "grace"].contains(span(at: t)?.state ?? "") }
        func mrr(at t: Int64) -> Int64? { paid(at: t) ? span(at: t)?.price : nil }
    }

    struct Month {
        var label: String
        var start: Int64
        var end: Int64
    }

    static let months = [
        Month(label: "2026-01", start: noon("01-01") - day / 2, end: noon("02-01") - day / 2),
        Month(label: "2026-02", start: noon("02-01") - day / 2, end: noon("03-01") - day / 2),
        Month(label: "2026-03", start: noon("03-01") - day / 2, end: noon("04-01") - day / 2),
        Month(label: "2026-04", start: noon("04-01") - day / 2, end: noon("05-01") - day / 2),
    ]

    /// The model's figures for one month: the states at its last instant; `new` by the first
    /// paid span's start; churn as paid access at some instant of the month and no access at
    /// its end; reactivation as access at the end, none just before the start, paid before.
    static func modelPoint(_ lives: [String: Life], _ month: Month) -> [String: Int64] {
        let last = month.end - 1
        var out: [String: Int64] = [:]
        func count(_ name: String, _ rule: (Life) -> Bool) { out[name] = Int64(lives.values.filter(rule).count) }
        count("active") { $0.access(at: last) }
        count("in_trial") { $0.span(at: last)?.state == "trial" }
        count("in_grace_period") { $0.span(at: last)?.state == "grace" }
        count("in_billing_retry") { $0.span(at: last)?.state == "retry" }
        func inMonth(_ t: Int64) -> Bool { month.start <= t && t < month.end }
        count("new") { life in life.spans.first { $0.state == "active" }.map { inMonth($0.from) } ?? false }
        count("trials_started") { life in life.spans.contains { $0.state == "trial" && inMonth($0.from) } }
        count("trials_converted") { life in
            guard let first = life.spans.firstIndex(where: { $0.state == "active" }), first > 0 else { return false }
            return life.spans[first - 1].state == "trial" && inMonth(life.spans[first].from)
        }
        count("churned") { life in
            let instants = [month.start] + life.spans.flatMap { [$0.from, $0.to].compactMap { $0 } }.filter(inMonth)
            return !life.access(at: last) && instants.contains { life.paid(at: $0) }
        }
        count("reactivated") { life in
            life.access(at: last) && !life.access(at: month.start - 1) && life.spans.contains { ["active", "grace"].contains($0.state) && $0.from < month.start }
        }
        out["mrr"] = lives.values.compactMap { $0.mrr(at: last) }.reduce(0, +)
        var movement = ["new": Int64(0), "expansion": 0, "contraction": 0, "churn": 0, "reactivation": 0]
        for life in lives.values {
            let (before, after) = (life.mrr(at: month.start - 1), life.mrr(at: last))
            switch (before, after) {
            case (nil, let a?):
                let firstPaid = life.spans.first { $0.state == "active" }!.from
                movement[firstPaid >= month.start ? "new" : "reactivation"]! += a
            case (let b?, nil): movement["churn"]! += b
            case (let b?, let a?) where a > b: movement["expansion"]! += a - b
            case (let b?, let a?) where a < b: movement["contraction"]! += b - a
            default: break
            }
        }
        for (name, value) in movement { out["\(name)_minor"] = value }
        return out
    }

    /// Each point's figures equal the model's for the same period.
    static func expect(_ points: [[String: any Sendable]], match lives: [String: Life], over periods: [Month]) {
        #expect(points.map { $0["period"] as? String } == periods.map(\.label))
        for (point, month) in zip(points, periods) {
            let model = modelPoint(lives, month)
            for figure in ["active", "in_trial", "in_grace_period", "in_billing_retry", "new", "churned", "reactivated", "trials_started", "trials_converted"] {
                #expect((point[figure] as? Int).map(Int64.init) == model[figure], "\(month.label) \(figure): ledger \(point[figure] ?? "nil"), model \(model[figure] ?? -1)")
            }
            // Before anyone pays (the first days of January) no currency is listed.
            let mrr = (point["mrr"] as? [[String: any Sendable]]) ?? []
            #expect(mrr.count == (model["mrr"] == 0 ? 0 : 1) && mrr.allSatisfy { $0["currency"] as? String == "USD" }, "\(month.label): \(mrr)")
            #expect((mrr.first?["mrr_minor"] as? Int).map(Int64.init) ?? 0 == model["mrr"], "\(month.label) mrr: \(mrr), model \(model["mrr"]!)")
            let movement = ((point["movement"] as? [[String: any Sendable]]) ?? []).first ?? [:]
            for figure in ["new_minor", "expansion_minor", "contraction_minor", "churn_minor", "reactivation_minor"] {
                #expect(((movement[figure] as? Int).map(Int64.init) ?? 0) == model[figure], "\(month.label) \(figure): \(movement), model \(model[figure]!)")
            }
        }
    }

    /// The queries the sums are checked on: each interval, one product, and a range that begins
    /// after the histories do (the states before it summed in).
    static func summedQueries() throws -> [HistoryQuery] {
        [
            try HistoryQuery(from: "2026-01-01", to: "2026-04-30", interval: .month),
            try HistoryQuery(from: "2026-01-01", to: "2026-04-30", interval: .day),
            try HistoryQuery(from: "2026-02-11", to: "2026-04-30", interval: .week),
            try HistoryQuery(from: "2026-01-01", to: "2026-04-30", interval: .day, productId: yearly),
            try HistoryQuery(from: "2026-01-01", to: "2026-04-30", interval: .month, productId: monthly),
        ]
    }

    /// The sums (`history_contributions`) answer what counting every history answers: once the
    /// summarizer has summed everything, and with 10 February's sums put back and the
    /// subscriptions that changed since marked (a summarizer far behind), corrected at read.
    static func sumsCorrect(_ ledger: LedgerHarness) async throws {
        @Sendable func counted(_ query: HistoryQuery, on connection: Connection) throws -> [SubscriptionMetrics.Point] {
            SubscriptionMetrics(lives: try ReadModels.lives(query, legacyApp: "", on: connection), periods: query.periods).points
        }
        try await HistorySummarizer(pool: ledger.pool, commission: .standard, logger: Self.quiet).drain()
        let summedQueries = try summedQueries()
        try await ledger.pool.withConnection { connection in
            // Everything below is rolled back: the server's sums are left as they were.
            _ = try connection.execute("BEGIN")
            defer { _ = try? connection.execute("ROLLBACK") }
            try ProjectionRunner.lockProjections(on: connection)
            #expect(try connection.query("SELECT count(*) FROM history_dirty")[0].decode(0, as: Int64.self) == 0)
            for query in summedQueries {
                let summed = try #require(try ReadModels.summedPoints(query, legacyApp: "", on: connection))
                #expect(summed == (try counted(query, on: connection)), "\(query.interval) \(query.productId ?? "")")
            }
            // Back to 10 February's sums, and marked what changed since.
            let changed: [String] = try connection.query("""
                SELECT original_transaction_id FROM history_subscriptions h FULL JOIN february_subscriptions f USING (original_transaction_id)
                WHERE h.intervals IS DISTINCT FROM f.intervals
                """).map { try $0.decode(0) }
            let all = try connection.query("SELECT count(*) FROM history_subscriptions")[0].decode(0, as: Int64.self)
            #expect(!changed.isEmpty && changed.count < all, "\(changed.count) of \(all) changed since 10 February")
            _ = try connection.execute("DELETE FROM history_contributions")
            _ = try connection.execute("INSERT INTO history_contributions SELECT * FROM february_contributions")
            _ = try connection.execute("DELETE FROM history_subscriptions")
            _ = try connection.execute("INSERT INTO history_subscriptions SELECT * FROM february_subscriptions")
            _ = try connection.execute("INSERT INTO history_dirty SELECT unnest(\(PostgresArray(changed.map { Optional($0) })))")
            for query in summedQueries {
                let corrected = try #require(try ReadModels.summedPoints(query, legacyApp: "", on: connection))
                #expect(corrected == (try counted(query, on: connection)), "corrected: \(query.interval) \(query.productId ?? "")")
            }
            // February's sums alone say otherwise: the correction is doing the work.
            _ = try connection.execute("DELETE FROM history_dirty")
            let stale = try #require(try ReadModels.summedPoints(summedQueries[0], legacyApp: "", on: connection))
            #expect(stale != (try counted(summedQueries[0], on: connection)))
        }
    }

    // MARK: - The scenario

    @Test("trials that convert and not, an upgrade, churn, billing retry that recovers and not, reactivation, a refund and a consumable: every figure as the model says, traceable to its subscriptions, and a replay changes no byte")
    func fourMonths() async throws {
        let start = Date(timeIntervalSince1970: Double(Self.noon("01-05")) / 1000)
        try await LedgerHarness.with(appleStart: start) { ledger in
            func advance(to monthDay: String) async throws {
                let target = Self.noon(monthDay)
                let now = ledger.simulator.nowMilliseconds
                if target > now { _ = try await ledger.simulator.advance(by: .milliseconds(target - now)) }
                try await ledger.eventually("every notification is recorded", within: .seconds(60)) {
                    try await ledger.count("AppleNotificationReceived")
                        == Int64(ledger.simulator.sentNotifications.filter { $0.version == .v2 }.count)
                }
            }
            var original: [String: String] = [:]
            func buy(_ name: String, _ product: String) async throws -> PurchaseResult {
                let (_, bought) = try await ledger.orderAndBuy(user: "fin-\(name)", product: product, appleId: "apple-fin-\(name)")
                let answer = try await ledger.submit(user: "fin-\(name)", purchase: bought)
                #expect(answer.status == 200, "\(name): \(answer.json)")
                original[name] = bought.transaction.originalTransactionId
                return bought
            }

            // 5 January: seven monthly plans start their 7-day trial, one yearly plan is paid,
            // and a consumable is bought (a sale, never a subscription).
            for name in ["a", "b", "c", "e", "f", "g", "j"] { _ = try await buy(name, Self.monthly) }
            _ = try await buy("d", Self.yearly)
            _ = try await buy("h", "com.example.coins100")
            // b never pays: auto-renew off during the trial.
            try await ledger.simulator.setAutoRenew(originalTransactionId: original["b"]!, enabled: false)
            try await advance(to: "02-10")
            // The sums as they stand on 10 February, kept to be put back later (`sumsCorrect`).
            try await HistorySummarizer(pool: ledger.pool, commission: .standard, logger: Self.quiet).drain()
            try await ledger.pool.withTransaction { connection in
                try ProjectionRunner.lockProjections(on: connection)
                _ = try connection.execute("CREATE TABLE february_contributions AS SELECT * FROM history_contributions")
                _ = try connection.execute("CREATE TABLE february_subscriptions AS SELECT * FROM history_subscriptions")
            }
            // e and f: the card fails at the 12 February renewal (a 16-day grace period).
            _ = try await ledger.simulator.setBillingFails(originalTransactionId: original["e"]!, true)
            _ = try await ledger.simulator.setBillingFails(originalTransactionId: original["f"]!, true)
            try await advance(to: "02-15")
            // g will leave when its month runs out (12 March); c upgrades to the yearly plan.
            try await ledger.simulator.setAutoRenew(originalTransactionId: original["g"]!, enabled: false)
            // The upgrade is bought on the device. Apple's notification names only the new
            // transaction; the app's receipt, which also shows the old one upgraded, comes late.
            let upgrade = try #require(try await ledger.simulator.changeProduct(originalTransactionId: original["c"]!, to: Self.yearly))
            try await advance(to: "02-20")
            #expect(try await ledger.submit(user: "fin-c", purchase: upgrade).status == 200)
            // e's card works again within the grace period: recovered, a new period from today.
            _ = try await ledger.simulator.setBillingFails(originalTransactionId: original["e"]!, false)
            try await advance(to: "02-25")
            // j's February renewal is refunded: access ends today.
            let jRenewal = try ledger.simulator.subscription(original["j"]!).latestTransactionId
            _ = try await ledger.simulator.refund(transactionId: jRenewal)
            try await advance(to: "04-03")
            // g comes back.
            _ = try await buy("g", Self.monthly)
            try await advance(to: "04-30")

            // The model, from the scenario's dates.
            let lives: [String: Life] = [
                "a": Life(name: "a", spans: [("trial", Self.noon("01-05"), Self.noon("01-12"), nil), ("active", Self.noon("01-12"), nil, 499)]),
                "b": Life(name: "b", spans: [("trial", Self.noon("01-05"), Self.noon("01-12"), nil), ("expired", Self.noon("01-12"), nil, nil)]),
                "c": Life(name: "c", spans: [
                    ("trial", Self.noon("01-05"), Self.noon("01-12"), nil), ("active", Self.noon("01-12"), Self.noon("02-15"), 499),
                    ("active", Self.noon("02-15"), nil, 417),
                ]),
                "d": Life(name: "d", spans: [("active", Self.noon("01-05"), nil, 417)]),
                "e": Life(name: "e", spans: [
                    ("trial", Self.noon("01-05"), Self.noon("01-12"), nil), ("active", Self.noon("01-12"), Self.noon("02-12"), 499),
                    ("grace", Self.noon("02-12"), Self.noon("02-20"), 499), ("active", Self.noon("02-20"), nil, 499),
                ]),
                "f": Life(name: "f", spans: [
                    ("trial", Self.noon("01-05"), Self.noon("01-12"), nil), ("active", Self.noon("01-12"), Self.noon("02-12"), 499),
                    ("grace", Self.noon("02-12"), Self.noon("02-28"), 499), ("retry", Self.noon("02-28"), Self.noon("04-13"), nil),
                    ("expired", Self.noon("04-13"), nil, nil),
                ]),
                "g": Life(name: "g", spans: [
                    ("trial", Self.noon("01-05"), Self.noon("01-12"), nil), ("active", Self.noon("01-12"), Self.noon("03-12"), 499),
                    ("expired", Self.noon("03-12"), Self.noon("04-03"), nil), ("active", Self.noon("04-03"), nil, 499),
                ]),
                "j": Life(name: "j", spans: [
                    ("trial", Self.noon("01-05"), Self.noon("01-12"), nil), ("active", Self.noon("01-12"), Self.noon("02-25"), 499),
                    ("revoked", Self.noon("02-25"), nil, nil),
                ]),
            ]

            let query = "from=2026-01-01&to=2026-04-30&interval=month"
            let report = try await ledger.get("/v1/reports/subscriptions?\(query)", token: LedgerHarness.financeToken)
            #expect(report.status == 200, "\(report.json)")
            let points = try #require(report.json["points"] as? [[String: any Sendable]])
            Self.expect(points, match: lives, over: Self.months)
            // And by day, every day of the four months: an upgrade hands its time on with no gap
            // (no churn the day c upgrades), a grace period ends at its instant, not a month's end.
            let byDay = try await ledger.get("/v1/reports/subscriptions?from=2026-01-01&to=2026-04-30&interval=day", token: LedgerHarness.financeToken)
            let days = (Int64(0)..<120).map { index in
                let start = Self.noon("01-01") - Self.day / 2 + index * Self.day
                return Month(label: RevenueDay.of(start), start: start, end: start + Self.day)
            }
            Self.expect(try #require(byDay.json["points"] as? [[String: any Sendable]]), match: lives, over: days)

            // The same figures by hand, so a mistake shared by the model and the ledger shows.
            #expect(points.map { (($0["mrr"] as? [[String: any Sendable]])?.first?["mrr_minor"] as? Int) ?? 0 } == [3411, 2331, 1832, 2331])
            #expect(points.map { $0["churned"] as? Int } == [0, 2, 1, 0])
            #expect(points.map { $0["reactivated"] as? Int } == [0, 0, 0, 1])
            #expect(points.map { $0["in_billing_retry"] as? Int } == [0, 1, 1, 0])

            // Traceable: each figure lists its subscriptions.
            func drill(_ figure: String, _ period: String) async throws -> Set<String> {
                let answer = try await ledger.get("/v1/reports/subscriptions?\(query)&figure=\(figure)&period=\(period)", token: LedgerHarness.financeToken)
                #expect(answer.status == 200, "\(answer.json)")
                return Set((answer.json["original_transaction_ids"] as? [String]) ?? [])
            }
            #expect(try await drill("churned", "2026-02") == [original["f"]!, original["j"]!])
            #expect(try await drill("reactivated", "2026-04") == [original["g"]!])
            #expect(try await drill("movement_contraction", "2026-02") == [original["c"]!])
            #expect(try await drill("in_billing_retry", "2026-03") == [original["f"]!])
            #expect(try await drill("trials_started", "2026-01") == Set(["a", "b", "c", "e", "f", "g", "j"].map { original[$0]! }))

            // One product: c joins the yearly plan in February, as new there.
            let yearly = try await ledger.get("/v1/reports/subscriptions?\(query)&product_id=\(Self.yearly)", token: LedgerHarness.financeToken)
            let yearlyPoints = try #require(yearly.json["points"] as? [[String: any Sendable]])
            #expect(yearlyPoints.map { $0["active"] as? Int } == [1, 2, 2, 2])
            #expect(yearlyPoints.map { $0["new"] as? Int } == [1, 1, 0, 0])

            // Refunds: sales by purchase day (the consumable counts, trials do not), refunds by the refund's.
            let refunds = try await ledger.get("/v1/reports/refunds?\(query)", token: LedgerHarness.financeToken)
            let refundPoints = try #require(refunds.json["points"] as? [[String: any Sendable]])
            #expect(refundPoints.map { $0["sales"] as? Int } == [8, 6, 2, 3], "\(refundPoints)")
            #expect(refundPoints.map { $0["refunds"] as? Int } == [0, 1, 0, 0], "\(refundPoints)")
            #expect(refundPoints.map { "\($0["refund_rate"] ?? "")" } == ["0", "0.1667", "0", "0"], "\(refundPoints)")
            let refunded = try #require((refundPoints[1]["refunded"] as? [[String: any Sendable]])?.first)
            #expect(refunded["currency"] as? String == "USD" && refunded["amount_minor"] as? Int == 499)

            // Cohorts: seven customers first paid in January (b never paid).
            let cohorts = try await ledger.get("/v1/reports/cohorts?from=2026-01-01&to=2026-04-30", token: LedgerHarness.financeToken)
            let cohort = try #require((cohorts.json["cohorts"] as? [[String: any Sendable]])?.first, "\(cohorts.json)")
            #expect((cohorts.json["cohorts"] as? [[String: any Sendable]])?.count == 1)
            #expect(cohort["cohort"] as? String == "2026-01" && cohort["customers"] as? Int == 7 && cohort["currency"] as? String == "USD")
            #expect(cohort["retained"] as? [Int] == [7, 5, 4, 5], "\(cohort)")
            #expect(cohort["revenue_minor"] as? [Int] == [7993, 14988, 15986, 17483], "\(cohort)")

            // CSV: the same figures, money in major units.
            let csv = try await ledger.openAPIExchange(.GET, "/v1/reports/subscriptions?\(query)&format=csv", token: LedgerHarness.financeToken)
            #expect(csv.header("Content-Type")?.hasPrefix("text/csv") == true)
            let lines = csv.text.components(separatedBy: "\r\n")
            #expect(lines.first?.hasPrefix("period,active,in_trial,") == true)
            #expect(lines.contains { $0.hasPrefix("2026-02,5,0,0,1,0,2,0,0,0,USD,23.31,") }, "\(lines)")

            try await Self.sumsCorrect(ledger)

            // A replay rebuilds every projection from the log: the reports do not change by a byte.
            let paths = [
                "/v1/reports/subscriptions?\(query)", "/v1/reports/subscriptions?\(query)&format=csv",
                "/v1/reports/subscriptions?from=2026-01-01&to=2026-04-30&interval=week", "/v1/reports/cohorts?from=2026-01-01&to=2026-04-30",
                "/v1/reports/refunds?\(query)", "/v1/reports/refunds?from=2026-01-01&to=2026-04-30&interval=day&format=csv",
            ]
            var before: [String: [UInt8]] = [:]
            for path in paths { before[path] = Array(try await ledger.openAPIExchange(.GET, path, token: LedgerHarness.financeToken).body) }
            let replay = try await ProjectionReplay(conninfo: ledger.conninfo, clock: ledger.server.service.clock, logger: Self.quiet).run(dryRun: false)
            #expect(replay.changes.isEmpty, "\(replay.changes)")
            // The swapped-in tables mark what changes again (`LIKE` copied no trigger).
            let watching = try await ledger.pool.withConnection { connection in
                try connection.query("""
                    SELECT c.relname::text FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                    WHERE t.tgname LIKE 'history_dirty_on_%' AND c.relnamespace = current_schema()::regnamespace ORDER BY 1
                    """).map { try $0.decode(0, as: String.self) }
            }
            #expect(Set(watching) == ["projection_entitlements", "projection_subscription_entries", "projection_renewal_observations", "projection_revenue_lines"])
            #expect(watching.count == 12, "\(watching)")
            for path in paths {
                #expect(Array(try await ledger.openAPIExchange(.GET, path, token: LedgerHarness.financeToken).body) == before[path], "\(path) changed with the replay")
            }

            // The command line prints the API's own answers, and lists a figure's subscriptions.
            func command(_ arguments: [String]) async throws -> CLIRun {
                try await CLIRun.run(["report"] + arguments, databaseURL: ledger.conninfo)
            }
            let range = ["--from", "2026-01-01", "--to", "2026-04-30"]
            let json = try await command(["subscriptions"] + range + ["--format", "json"])
            #expect(json.status == 0, "\(json.stderr)")
            #expect(json.stdout == String(decoding: before[paths[0]]!, as: UTF8.self) + "\n")
            let csvOut = try await command(["subscriptions"] + range + ["--format", "csv"])
            #expect(csvOut.stdout == String(decoding: before[paths[1]]!, as: UTF8.self))
            let refundsCSV = try await command(["refunds"] + range + ["--interval", "day", "--format", "csv"])
            #expect(refundsCSV.stdout == String(decoding: before[paths[5]]!, as: UTF8.self))
            let table = try await command(["subscriptions"] + range)
            #expect(table.status == 0 && table.stdout.contains("2026-02") && table.stdout.contains("23.31"), "\(table.stdout)")
            let churnedIds = try await command(["subscriptions"] + range + ["--figure", "churned", "--period", "2026-02"])
            #expect(Set(churnedIds.stdout.split(separator: "\n").map(String.init)) == [original["f"]!, original["j"]!])
            let cohortIds = try await command(["cohorts"] + range + ["--cohort", "2026-01"])
            #expect(cohortIds.stdout.split(separator: "\n").count == 7)
            let badInterval = try await command(["subscriptions"] + range + ["--interval", "hour"])
            #expect(badInterval.status == 2 && badInterval.stderr.contains("--interval"), "\(badInterval.stderr)")
            let badCohort = try await command(["cohorts"] + range + ["--by", "week"])
            #expect(badCohort.status == 2 && badCohort.stderr.contains("--by"), "\(badCohort.stderr)")
            let badDate = try await command(["refunds", "--from", "2026-02-30", "--to", "2026-04-30"])
            #expect(badDate.status == 2 && badDate.stderr.contains("2026-02-30"), "\(badDate.stderr)")
        }
    }
}

/// Days since 1970 of a civil date, for the scenario's instants (the tests' own arithmetic).
enum ReportPeriodProbe {
    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
