import AppStore
import AppStoreClient
import EventStore
import Foundation
import Ledger
import LedgerProjections
import LedgerQueries
import LedgerService
import LedgerStore
import Logging
import Postgres

/// `Tools/bench replay` and `dispute`: a log of the demo's mix (orders, receipts, Apple's answers,
/// deliveries, ownership, renewals, refunds) grown by COPY, then the rebuild of every projection
/// (events/s, peak memory) beside COPY TO of the same events, and timelines read from it.
enum ReplayBench {
    static let catalog = #"{"products": [{"product_id": "com.example.coins100", "kind": "consumable", "grants": {"coins": 100}, "price_minor": 99, "currency": "USD"}, {"product_id": "com.example.removeads", "kind": "non_consumable", "price_minor": 299, "currency": "USD"}, {"product_id": "com.example.pro.monthly", "kind": "auto_renewable", "price_minor": 499, "currency": "USD"}]}"#

    static var logger: Logger {
        var logger = Logger(label: "bench.replay")
        logger.logLevel = .error
        return logger
    }

    /// How many users the grown log's purchases go to, in turn: 50,000, or `BENCH_USERS`. A log
    /// grown to 1,000,000 events for 2,500 users gives each user the history a 20,000,000-event
    /// log gives each of 50,000 (about 400 timeline entries), in minutes rather than half an hour.
    static let users: Int64 = ProcessInfo.processInfo.environment["BENCH_USERS"].flatMap { Int64($0) }.map { max(1, $0) } ?? 50_000

    /// `BENCH_OBSERVATIONS=1`: each subscription's log also holds the renewal states Apple signs
    /// (what the finance reports' history reads); off by default, so the log every earlier
    /// replay figure was measured on stays the same.
    static let observations = ProcessInfo.processInfo.environment["BENCH_OBSERVATIONS"] == "1"

    /// The apps the grown log's purchases are sold in, in turn: `BENCH_APPS` of them (1 by
    /// default), each with the same catalog: the same product ids in every app.
    static let apps: [String] = {
        let count = ProcessInfo.processInfo.environment["BENCH_APPS"].flatMap { Int($0) }.map { max(1, $0) } ?? 1
        return (0..<count).map { $0 == 0 ? "com.example.app" : "com.example.app\($0 + 1)" }
    }()

    /// Grows the log of schema `bench_replay` (created on first use) to at least `events`;
    /// with `countries`, each sale is signed in one of six storefronts at its tier's price.
    static func grow(conninfo: String, to events: Int64, countries: Bool = false) async throws {
        let pool = ConnectionPool(conninfo: conninfo, maxConnections: 1, logger: logger)
        do {
            try await grow(pool: pool, to: events, countries: countries)
            await pool.close()
        } catch {
            await pool.close()
            throw error
        }
    }

    private static func grow(pool: ConnectionPool, to events: Int64, countries: Bool) async throws {
        try await Migrator.ledger().migrate(pool: pool, logger: logger)
        let log = LedgerLog(store: EventStore(pool: pool, logger: logger))
        var head = try await log.store.headPosition()
        if head == 0 {
            for app in apps {
                _ = try await CatalogStore().load(Data(catalog.utf8), bundleId: app, into: log, metadata: RequestMetadata(actor: "bench"))
            }
            head = Int64(apps.count)
            // As `serve` records on an empty log: sealing begins with its first person.
            if BenchPeople.sealed {
                try await log.append(
                    [LedgerAppend(stream: Streams.erasure, expectation: .noStream, events: [.erasureBegan(ErasureBegan(beganAtMs: 1_767_225_600_000))])],
                    metadata: RequestMetadata(actor: "bench"))
                head += 1
            }
        }
        let people = BenchPeople(pool: pool)
        var purchase = try await LedgerReads(pool: pool).eventCount(ofType: "OrderCreated")
        while head < events {
            try await people.meet((purchase..<(purchase + 1_000)).map { $0 % users })
            let batch = (0..<1_000).flatMap { offset in appends(for: purchase + Int64(offset), countries: countries, people: people) }
            purchase += 1_000
            head += Int64(try await pool.withTransaction { try log.copyAppend(batch, metadata: RequestMetadata(actor: "bench"), on: $0) })
        }
        print(head)
    }

    /// Six storefronts, their currencies, and the price of the 0.99, 2.99 and 4.99 USD tiers in
    /// each (the simulator's `PriceTerritory` tiers), in minor units.
    static let storefronts: [(country: String, currency: String, coins: Int64, removeAds: Int64, monthly: Int64)] = [
        ("USA", "USD", 99, 299, 499), ("DEU", "EUR", 99, 299, 499), ("FRA", "EUR", 99, 299, 499),
        ("GBR", "GBP", 99, 299, 499), ("JPN", "JPY", 160, 500, 800), ("BRA", "BRL", 590, 1_790, 2_990),
    ]

    /// What purchase `n` is signed with in a log grown with countries: its storefront, and its
    /// product's price there in milliunits; nil values without countries (a receipt's sale).
    static func signed(_ n: Int64, product: String, countries: Bool) -> (storefront: String?, milliunits: Int64?, currency: String?) {
        guard countries else { return (nil, nil, nil) }
        let store = storefronts[Int(n % Int64(storefronts.count))]
        let minor = product == "com.example.pro.monthly" ? store.monthly : (product == "com.example.removeads" ? store.removeAds : store.coins)
        return (store.country, minor * (Money.minorDigits(of: store.currency) == 0 ? 1_000 : 10), store.currency)
    }

    /// One purchase's events as the live flow records them; every sixth is a monthly plan with
    /// two renewals, every 25th removes ads, every 40th is refunded.
    static func appends(for n: Int64, countries: Bool = false, people: BenchPeople? = nil) -> [LedgerAppend] {
        let user = people?.recorded(n % users) ?? BenchPeople.id(n % users), tx = String(2_000_000_000_000 + n * 4), order = "order-\(n)", submission = "sub-\(n)"
        let product = n % 6 == 0 ? "com.example.pro.monthly" : (n % 25 == 0 ? "com.example.removeads" : "com.example.coins100")
        let kind: ProductKind = n % 6 == 0 ? .autoRenewable : (n % 25 == 0 ? .nonConsumable : .consumable)
        let at: Int64 = 1_767_225_600_000 + n * 60_000
        let grants: [String: Int64] = kind == .consumable ? ["coins": 100] : [:]
        let document = String(repeating: "ab", count: 32)
        let sold = signed(n, product: product, countries: countries)
        // Each user buys in one app: a user's purchases stay in one app's balances.
        let app = apps[Int((n % ReplayBench.users) % Int64(apps.count))]
        let delivered = PurchaseDelivered(
            transactionId: tx, originalTransactionId: tx, productId: product, kind: kind, quantity: 1, userId: user, orderId: order,
            environment: "Production", purchaseDateMs: at, expiresDateMs: kind == .autoRenewable ? at + 30 * 86_400_000 : nil,
            priceMilliunits: sold.milliunits, currency: sold.currency, appAccountToken: nil, appTransactionId: nil, isTrial: false, grants: grants,
            submissionId: submission, match: .appAccountToken, storefront: sold.storefront, bundleId: app)
        var appends = [
            LedgerAppend(stream: Streams.order(order), expectation: .noStream, events: [
                .orderCreated(OrderCreated(
                    orderId: order, userId: user, productId: product, quantity: 1, appAccountToken: people?.token(for: n % users) ?? UUID().uuidString.lowercased(),
                    createdAtMs: at - 5_000, bundleId: app)),
                .orderFulfilled(OrderFulfilled(orderId: order, transactionId: tx)),
            ]),
            LedgerAppend(stream: Streams.submission(submission), expectation: .noStream, events: [
                .receiptSubmitted(ReceiptSubmitted(submissionId: submission, userId: user, orderId: nil, transactionId: tx, kind: .receipt, documentSha256: document, submittedAtMs: at)),
                .appleResponded(AppleResponded(submissionId: submission, endpoint: "production", url: "https://buy.itunes.apple.com/verifyReceipt", httpStatus: 200, status: 0, latencyMs: 120, startedAtMs: at, documentSha256: nil, failure: nil)),
                .submissionResolved(SubmissionResolved(submissionId: submission, outcome: "delivered", transactionIds: [tx])),
            ]),
            LedgerAppend(stream: Streams.transaction(tx), expectation: .noStream, events: [.purchaseDelivered(delivered)]),
        ]
        if kind.isOwned {
            appends.append(LedgerAppend(stream: Streams.ownership(tx), expectation: .noStream, events: [
                .ownershipClaimed(OwnershipClaimed(
                    originalTransactionId: tx, productId: product, kind: kind, userId: user, transactionId: tx, environment: "Production",
                    bundleId: app)),
            ]))
        }
        if kind == .autoRenewable {
            for renewal in 1...2 {
                let id = String(2_000_000_000_000 + n * 4 + Int64(renewal))
                let start = at + Int64(renewal) * 30 * 86_400_000
                appends.append(LedgerAppend(stream: Streams.transaction(id), expectation: .noStream, events: [
                    .subscriptionRenewalSeen(SubscriptionRenewalSeen(
                        transactionId: id, originalTransactionId: tx, productId: product, userId: user, environment: "Production",
                        purchaseDateMs: start, expiresDateMs: start + 30 * 86_400_000, isTrial: false,
                        priceMilliunits: sold.milliunits ?? 4_990, currency: sold.currency ?? "USD", source: "notification", storefront: sold.storefront,
                        bundleId: app)),
                ]))
            }
        }
        if kind == .autoRenewable, observations {
            // What Apple's notifications sign at each renewal; every second subscription's card
            // fails after its last period: a grace period, then billing retry until Apple stops.
            let end = at + 3 * 30 * 86_400_000
            var signed = (1...2).map { RenewalObservation(
                observedAtMs: at + Int64($0) * 30 * 86_400_000, autoRenew: true, autoRenewProductId: product, inBillingRetry: false,
                gracePeriodExpiresMs: nil) }
            if n % 12 == 0 {
                signed.append(RenewalObservation(
                    observedAtMs: end, autoRenew: true, autoRenewProductId: product, inBillingRetry: true, gracePeriodExpiresMs: end + 16 * 86_400_000))
                signed.append(RenewalObservation(
                    observedAtMs: end + 60 * 86_400_000, autoRenew: true, autoRenewProductId: product, inBillingRetry: false, gracePeriodExpiresMs: nil))
            }
            appends.append(LedgerAppend(stream: Streams.transaction(tx + "-renewals"), expectation: .noStream, events: signed.map {
                .subscriptionObserved(SubscriptionObserved(
                    originalTransactionId: tx, environment: "Production", entries: [], renewal: $0, source: "notification"))
            }))
        }
        if n % 40 == 7 {
            appends.append(LedgerAppend(stream: Streams.refund(tx), expectation: .noStream, events: [
                .purchaseRefunded(PurchaseRefunded(
                    transactionId: tx, originalTransactionId: tx, productId: product, kind: kind, quantity: 1, userId: user, environment: "Production",
                    grants: grants, refundedAtMs: at + 7 * 86_400_000, reason: 0, revocation: "refund", source: "notification", bundleId: app)),
            ]))
        }
        return appends
    }

    /// COPY TO of the whole log, then `rounds` rounds of a rebuild of every projection (dry run)
    /// and the fold alone, alternating, in one process whose peak memory is read after the
    /// first rebuild (the floor's folds keep every state in memory). This machine's speed moves
    /// from minute to minute (the floor alone ran at 41,000 to 54,000 events/s in four runs
    /// within half an hour), so each round's rebuild is divided by the floor measured next to
    /// it and the median of those ratios is the figure. Prints "EVENTS DRY_RUN_RATE PEAK_MB
    /// COPY_TO_RATE REBUILD_RATE FOLD_RATE RATIO", rates as medians over the rounds.
    ///
    /// `swap` replays for real (the rebuilt tables become the live ones), so a log of 20,000,000
    /// events is rebuilt once for the rate and then read by `dispute` and `console`; `floor`
    /// false leaves the fold-only floor out (its rate is then 0).
    static func run(conninfo: String, rounds: Int = 3, pageSize: Int? = nil, swap: Bool = false, floor: Bool = true) async throws {
        let pageSize = pageSize ?? ProjectionReplay.defaultPageSize
        let pool = ConnectionPool(conninfo: conninfo, maxConnections: 1, logger: logger)
        let (rows, copySeconds) = try await pool.withConnection { connection -> (Int, Double) in
            let started = ContinuousClock.now
            let rows = try EventStore.copyOutWholeLog(on: connection)
            return (rows, (ContinuousClock.now - started).seconds)
        }
        var events: Int64 = 0, peak = 0.0
        var whole: [Double] = [], rebuilt: [Double] = [], folds: [Double] = [], ratios: [Double] = []
        for round in 0..<max(rounds, 1) {
            let started = ContinuousClock.now
            // The page size `purchase-ledger replay` uses (its default), so the figure is the command's.
            let report = try await ProjectionReplay(conninfo: conninfo, pageSize: pageSize, clock: .system, logger: logger).run(dryRun: !swap)
            let elapsed = (ContinuousClock.now - started).seconds
            if round == 0 { peak = peakMemoryMB() }
            let fold = floor ? try await foldRate(store: EventStore(pool: pool, logger: logger), pageSize: pageSize) : 0
            if floor, ProcessInfo.processInfo.environment["BENCH_FOLD_DECODER"] == "1" {
                let before = try await foldRate(store: EventStore(pool: pool, logger: logger), pageSize: pageSize, decoder: true)
                FileHandle.standardError.write(Data(String(
                    format: "round %d: fold only with JSONDecoder alone %.0f events/s; with PayloadValueDecoder %.0f (%.2f×)\n",
                    round + 1, before, fold, fold / before).utf8))
            }
            events = report.events
            whole.append(Double(report.events) / elapsed)
            rebuilt.append(Double(report.events) / report.rebuilt.seconds)
            folds.append(fold)
            ratios.append(floor ? rebuilt.last! / fold : 0)
            FileHandle.standardError.write(Data(String(
                format: "round %d: rebuild %.0f events/s, fold only %.0f events/s, %.3f×\n", round + 1, rebuilt.last!, fold, ratios.last!).utf8))
        }
        await pool.close()
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        print(String(
            format: "%d %.0f %.0f %.0f %.0f %.0f %.3f", events, median(whole), peak, Double(rows) / copySeconds,
            median(rebuilt), median(folds), median(ratios)))
    }

    /// Events per second through the part of a rebuild that writes nothing: every page read
    /// (the rebuild's page size), each event decoded, and every projection's changes computed.
    /// No rebuild through these folds can go faster on this machine, whatever its writes cost.
    ///
    /// `decoder` decodes each payload with `JSONDecoder` alone, as every fold did before
    /// PayloadValueDecoder: the figure to set beside this one, in the same run.
    static func foldRate(
        store: EventStore, pageSize: Int = ProjectionReplay.defaultPageSize, decoder: Bool = false, projections: [any Projection] = Projections.all
    ) async throws -> Double {
        let started = ContinuousClock.now
        var position: Int64 = 0, events = 0, changes = 0
        // The webhook messages' fold too, its states kept in memory: the rebuild folds it (and
        // writes its states), so a floor without it would not bound the rebuild's work.
        let folds = projections.compactMap { $0 as? any FoldingProjection }.map { InMemoryFold($0) }
        while true {
            let page = try await store.events(after: position, limit: pageSize)
            guard let last = page.last else { break }
            for recorded in page {
                let place = EventPlace(position: recorded.position, recordedAtMs: recorded.recordedAt.microsecondsSince1970 / 1000, hash: recorded.hash)
                let event = decoder
                    ? try LedgerEvent.decodedByDecoder(type: recorded.type, payload: Data(recorded.payload.bytes)) : try recorded.ledgerEvent
                for projection in projections { changes += projection.changes(for: event, at: place).count }
                for fold in folds { changes += fold.fold(event, at: place) }
            }
            events += page.count
            position = last.position
        }
        // Read, so the folds cannot be optimized away.
        guard changes > 0 else { throw BenchError("the log gave no projection changes") }
        return Double(events) / (ContinuousClock.now - started).seconds
    }

    /// p50 and p99 of `GET /v1/timelines/...`'s read (ReadModels.timeline) for random
    /// transactions and users. Prints "P50_MS P99_MS READS".
    static func dispute(conninfo: String, reads count: Int, label: String? = nil) async throws {
        let pool = ConnectionPool(conninfo: conninfo, maxConnections: 2, logger: logger)
        let runner = ProjectionRunner(store: EventStore(pool: pool, logger: logger), conninfo: conninfo, pageSize: 2_000, logger: logger)
        try await runner.catchUp()
        let reads = ReadModels(runner: runner, timeout: .seconds(30), clock: .fixed(0))
        let purchases = try await LedgerReads(pool: pool).eventCount(ofType: "OrderCreated")
        var generator = SystemRandomNumberGenerator()
        var latencies: [Double] = [], byUser: [Double] = [], byTransaction: [Double] = [], userRows: [Double] = []
        for index in 0..<count {
            let n = Int64.random(in: 0..<purchases, using: &generator)
            // A person is read under what the log records for them, as the API reads them.
            let user = index % 4 == 3 ? try await BenchPeople.recorded(n % users, on: pool) : ""
            let started = ContinuousClock.now
            let view = index % 4 == 3
                ? try await reads.timeline(.user, user)
                : try await reads.timeline(.transaction, String(2_000_000_000_000 + n * 4))
            let elapsed = (ContinuousClock.now - started).seconds * 1_000
            latencies.append(elapsed)
            if index % 4 == 3 { byUser.append(elapsed) } else { byTransaction.append(elapsed) }
            guard view != nil else { throw BenchError("no timeline for purchase \(n)") }
            if index % 4 == 3 {
                // The floor beside each user's read, just after it (so the read is not served
                // from pages the floor brought in): the same rows fetched by the same SQL on one
                // connection, nothing decoded, hashed or shaped.
                let started = ContinuousClock.now
                let rows = try await pool.withConnection { try LedgerReads.timelineEvents(of: TimelineProjection.Subject.user(user), on: $0) }
                userRows.append((ContinuousClock.now - started).seconds * 1_000)
                guard !rows.isEmpty else { throw BenchError("no rows for user \(n % ReplayBench.users)") }
            }
        }
        await pool.close()
        func percentiles(_ values: [Double]) -> (Double, Double) {
            let sorted = values.sorted()
            return (sorted[sorted.count / 2], sorted[min(sorted.count - 1, sorted.count * 99 / 100)])
        }
        let (p50, p99) = percentiles(latencies)
        // A user's timeline holds everything the user did: in the grown log each of its 50,000
        // users buys every 50,000th purchase, so a user's history grows with the log while a
        // transaction's does not. Each kind's figures apart, to stderr.
        let (u50, u99) = percentiles(byUser), (t50, t99) = percentiles(byTransaction), (r50, r99) = percentiles(userRows)
        FileHandle.standardError.write(Data(String(
            format: "transactions: p50 %.2f ms, p99 %.2f ms (%d reads); users: p50 %.2f ms, p99 %.2f ms (%d reads); users' rows alone (SQL floor): p50 %.2f ms, p99 %.2f ms\n",
            t50, t99, byTransaction.count, u50, u99, byUser.count, r50, r99).utf8))
        if let label {
            print(String(format: "%@: p50 %.2f ms, p99 %.2f ms over %d reads", label, p50, p99, count))
        } else {
            print(String(format: "%.2f %.2f %d", p50, p99, count))
        }
    }

    /// The process's peak resident memory (VmHWM), in MB.
    static func peakMemoryMB() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
        else { return 0 }
        return kilobytes / 1_024
    }
}

/// A folding projection folded with every state in memory, for the fold-only floor.
struct InMemoryFold {
    private let step: (LedgerEvent, EventPlace) -> Int

    init(_ projection: any FoldingProjection) {
        step = Self.folding(projection)
    }

    private static func folding<P: FoldingProjection>(_ projection: P) -> (LedgerEvent, EventPlace) -> Int {
        var states: [String: P.State] = [:]
        return { event, place in projection.fold(event, at: place, states: &states).count }
    }

    /// Folds `event`; returns how many changes it made.
    func fold(_ event: LedgerEvent, at place: EventPlace) -> Int { step(event, place) }
}
