import AppleSimulator
import AppStore
import AppStoreClient
import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import NIOCore

/// The floor under `flow`: the same clients, receipts and simulator, but a server that only does
/// what any server of this flow must (read the request, ask verifyReceipt over HTTP, decode
/// Apple's answer, reply) and touches no database. What it reaches on this machine bounds what
/// the ledger can reach, whatever its database work costs. Returns "RATE P50_MS P99_MS
/// PROCESS_CPU_MS", the last per receipt.
enum FlowFloorBench {
    /// `POST /v1/receipts`'s body, decoded whole as the ledger decodes it.
    private struct Submission: Decodable {
        var userId: String
        var receiptData: String
        var transactionId: String?
    }

    static func run(clients: Int, seconds: Double) async throws -> String {
        var logger = Logger(label: "bench.flow-floor")
        logger.logLevel = .error
        let apple = try await AppleSimulatorServer(simulator: try AppleSimulator(configuration: .init(machineClock: .system)), logger: logger).start()
        let appleClient = HTTPClient(eventLoopGroupProvider: .singleton)
        let verifier = VerifyReceiptClient(
            configuration: VerifyReceiptConfiguration(productionURL: apple.productionURL, sandboxURL: apple.sandboxURL), clock: .system,
            transport: HTTPVerifyReceiptTransport(httpClient: appleClient), logger: logger)

        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let router = Router()
        router.post("/v1/receipts") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            let submission = try decoder.decode(Submission.self, from: body)
            let outcome = try await verifier.verify(receiptData: submission.receiptData)
            guard outcome.verdict == .valid,
                outcome.response?.receipt?.inApp.contains(where: { $0.transactionID == submission.transactionId }) == true
            else { return Response(status: .unprocessableContent) }
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: #"{"status":"delivered"}"#)))
        }
        let (port, stop) = try await FloorServer.start(router: router, logger: logger)

        let count = Int((seconds + 1) * 3_000)
        var purchases: [(user: String, receipt: String, transaction: String)] = []
        for index in 0..<count {
            let purchase = try await apple.simulator.purchase(
                appleId: "apple-\(index)", productId: "com.example.coins100", environment: .production)
            purchases.append((user: "user-\(index)", receipt: purchase.receiptData, transaction: purchase.transactionId))
        }

        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let figures = try await ClosedLoop.run(clients: clients, seconds: seconds, items: purchases) { purchase in
            try await FlowBench.submit(purchase, to: "http://127.0.0.1:\(port)", client: client)
        }
        try await client.shutdown()
        await stop()
        try await appleClient.shutdown()
        try await apple.stop()
        return String(format: "%.0f %.2f %.2f %.2f", figures.rate, figures.p50, figures.p99, figures.processCPU)
    }
}
