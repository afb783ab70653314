import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import Synchronization

/// `Tools/bench reads`: `GET /v1/users/{id}` right after the caller's own receipt, while 8
/// clients keep submitting receipts, beside the same read once everything has been applied
/// (nothing to wait for). A read waits until the projections hold the log's head as it stood
/// when the read began, so the first figure is the read plus that wait; the gap between the two
/// is what waiting costs. In two of every three rounds the reader times, instead of the read,
/// the wait alone (the log's head, then the runner's progress to it, in this process), or one
/// round trip to PostgreSQL (`SELECT 1` on a pooled connection). The wait is the projection
/// runner's pass, which no read that must see its own write can skip, and a pass is three round
/// trips: the round trip under the same load is the wait's floor. In a fourth of the rounds the
/// read carries `X-Ledger-After` with the receipt's own `X-Ledger-Position`: it waits for that
/// receipt only, not for the writers' events after it. Returns "LOADED_P50 LOADED_P99 IDLE_P50
/// IDLE_P99 READS RECEIPT_P99 WAIT_P50 WAIT_P99 ROUNDTRIP_P50 ROUNDTRIP_P99 AFTER_P50 AFTER_P99"
/// (the first six as builds before X-Ledger-After printed them, for BENCH_BASELINE).
enum ReadBench {
    static func run(conninfo: String, clients: Int, seconds: Double) async throws -> String {
        var logger = Logger(label: "bench.reads")
        logger.logLevel = .error
        let (schemaConninfo, pool) = try await migratedSchema("reads", conninfo: conninfo, logger: logger)
        let (apple, server) = try await FlowBench.startServers(conninfo: schemaConninfo, logger: logger)
        let count = Int((seconds + 1) * 1_500)
        let purchases = try await FlowBench.prepare(count: count, server: server, simulator: apple.simulator)
        // The reader's own purchases: enough for a round of a read every 25 ms (a quarter of
        // them each kind), so that a p99 rests on more than a hundred reads.
        let readerCount = max(400, Int(seconds * 40))
        let (writes, reads) = (Array(purchases.dropLast(readerCount)), Array(purchases.suffix(readerCount)))
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let base = server.baseURL

        // The reader: its own receipt, then at once its user's view, timing the read alone.
        let stop = Atomic<Bool>(false)
        let readModels = server.reads
        async let loaded: (reads: [Duration], waits: [Duration], roundTrips: [Duration], afterOwn: [Duration]) = {
            var latencies: [Duration] = []
            var waits: [Duration] = []
            var roundTrips: [Duration] = []
            var afterOwn: [Duration] = []
            try await Task.sleep(for: ClosedLoop.warmUp)
            for (index, purchase) in reads.enumerated() where !stop.load(ordering: .relaxed) {
                let position = try await FlowBench.submit(purchase, to: base, client: client)
                let began = ContinuousClock.now
                switch index % 4 {
                case 3:
                    guard let position else { throw BenchError("a receipt's answer carried no X-Ledger-Position") }
                    try await readUser(purchase.user, base: base, client: client, after: position)
                    afterOwn.append(ContinuousClock.now - began)
                case 0:
                    try await readUser(purchase.user, base: base, client: client)
                    latencies.append(ContinuousClock.now - began)
                case 1:
                    try await readModels.waitForHead()
                    waits.append(ContinuousClock.now - began)
                default:
                    try await pool.withConnection { connection in _ = try connection.query("SELECT 1") }
                    roundTrips.append(ContinuousClock.now - began)
                }
            }
            return (latencies, waits, roundTrips, afterOwn)
        }()
        let receiptP99 = try await ClosedLoop.run(clients: clients, seconds: seconds, items: writes) { purchase in
            try await FlowBench.submit(purchase, to: base, client: client)
        }.p99
        stop.store(true, ordering: .relaxed)
        let (underLoad, waits, roundTrips, afterOwn) = try await loaded

        // The same reads with nothing written meanwhile: the projections hold the head already.
        var idle: [Duration] = []
        for purchase in reads.prefix(max(underLoad.count, 50)) {
            let began = ContinuousClock.now
            try await readUser(purchase.user, base: base, client: client)
            idle.append(ContinuousClock.now - began)
        }
        try await client.shutdown()
        try await server.stop()
        try await apple.stop()
        await pool.close()
        let (l50, l99) = percentiles(underLoad)
        let (i50, i99) = percentiles(idle)
        let (w50, w99) = percentiles(waits)
        let (r50, r99) = percentiles(roundTrips)
        let (a50, a99) = percentiles(afterOwn)
        return String(
            format: "%.2f %.2f %.2f %.2f %d %.2f %.2f %.2f %.2f %.2f %.2f %.2f",
            l50, l99, i50, i99, underLoad.count, receiptP99, w50, w99, r50, r99, a50, a99)
    }

    static func readUser(_ user: String, base: String, client: HTTPClient, after position: String? = nil) async throws {
        var request = HTTPClientRequest(url: base + "/v1/users/" + user)
        request.headers.add(name: "Authorization", value: "Bearer \(FlowBench.token)")
        if let position { request.headers.add(name: "X-Ledger-After", value: position) }
        let response = try await client.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok else { throw BenchError("a read was answered \(response.status.code)") }
    }

    static func percentiles(_ latencies: [Duration]) -> (p50: Double, p99: Double) {
        let sorted = latencies.sorted()
        guard !sorted.isEmpty else { return (0, 0) }
        func at(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))].seconds * 1_000 }
        return (at(0.5), at(0.99))
    }
}
