import AsyncHTTPClient
import EventStore
import Foundation
import LedgerService
import LedgerStore
import Logging

/// `Tools/bench erase`: the time to erase a person who has about `events` events, each person's
/// purchases made through the HTTP server as the flow makes them (their id sealed), the erasure
/// through the service (what `DELETE /v1/users/{id}` and `erase-user` call). Returns "P50_MS
/// MAX_MS EVENTS_PER_PERSON". An erasure destroys one key and appends one event: its time should
/// not grow with the person's history.
enum EraseBench {
    static func run(conninfo: String, people: Int, events: Int) async throws -> String {
        var logger = Logger(label: "bench.erase")
        logger.logLevel = .error
        let (schemaConninfo, pool) = try await migratedSchema("erase", conninfo: conninfo, logger: logger)
        let (apple, server) = try await FlowBench.startServers(conninfo: schemaConninfo, logger: logger)
        let store = EventStore(pool: pool, logger: logger)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        var times: [Double] = []
        var recorded: [Int64] = []
        do {
            for person in 0..<people {
                let user = "erase-bench-\(person)"
                let handle = try await server.service.people.handle(forUser: user)
                let before = try await store.headPosition()
                var index = 0
                // Six events a purchase: the order, the receipt, Apple's answer, the delivery,
                // the order fulfilled, the submission resolved.
                while try await store.headPosition() - before < Int64(events) {
                    let order = try await server.service.createOrder(
                        userId: handle, productId: "com.example.coins100", quantity: 1, metadata: RequestMetadata(actor: "bench"))
                    let purchase = try await apple.simulator.purchase(
                        appleId: "apple-erase-\(person)-\(index)", productId: "com.example.coins100", environment: .production,
                        appAccountToken: UUID(uuidString: try await server.service.people.plaintext(of: order.appAccountToken) ?? ""), bundleId: "com.example.app")
                    try await FlowBench.submit((user, purchase.receiptData, purchase.transactionId), to: server.baseURL, client: client)
                    index += 1
                }
                recorded.append(try await store.headPosition() - before)
                let start = ContinuousClock.now
                _ = try await server.service.eraseUser(
                    user, reason: "bench", requestId: "bench-\(person)", metadata: RequestMetadata(actor: "bench"))
                times.append((ContinuousClock.now - start).seconds * 1_000)
            }
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
        try await server.stop()
        try await apple.stop()
        await pool.close()
        let sorted = times.sorted()
        return String(format: "%.2f %.2f %d", sorted[sorted.count / 2], sorted.last ?? 0, recorded.sorted()[recorded.count / 2])
    }
}
