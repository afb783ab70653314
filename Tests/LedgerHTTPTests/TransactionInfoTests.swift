import AppStore
import AppStoreClient
import AppleSimulator
import Foundation
import Ledger
import LedgerService
import LedgerStore
import LedgerWorkers
import Logging
import Postgres
import Testing

/// A sale seen only in a receipt has no storefront and no price as Apple signed them: the
/// ledger asks Apple's Get Transaction Info once, by a worker, never on the request path
/// (docs/configuration.md "Money"). Real PostgreSQL, the simulator over real HTTP, its JWTs checked.
@Suite("Get Transaction Info for sales seen only in receipts")
struct TransactionInfoTests {
    static func recorded(_ ledger: LedgerHarness) async throws -> [TransactionInfoRecorded] {
        try await ledger.events("TransactionInfoRecorded").compactMap {
            if case .transactionInfoRecorded(let info) = $0 { info } else { nil }
        }
    }

    static func worker(_ ledger: LedgerHarness, clients: ServerAPIClients? = nil) throws -> TransactionInfoWorker {
        let service = ledger.server.service
        let asking: ServerAPIClients
        if let clients { asking = clients } else { asking = try #require(service.serverAPI) }
        var logger = Logger(label: "tests.transaction-info")
        logger.logLevel = .warning
        return TransactionInfoWorker(service: service, clients: asking, interval: .milliseconds(50), logger: logger)
    }

    static func documentKind(_ ledger: LedgerHarness, _ name: String) async throws -> String? {
        try await ledger.pool.withConnection { connection in
            try connection.query("SELECT kind FROM documents WHERE sha256 = decode(\(name), 'hex')").first?.decode(0, as: String.self)
        }
    }

    @Test("a receipt-only sale, production and sandbox, is recorded once with Apple's storefront, price and currency, its JWS kept verbatim, however many workers pass")
    func recordsOncePerSale() async throws {
        try await LedgerHarness.with(askApple: true, transactionInfoInterval: .milliseconds(50)) { ledger in
            // A second worker, as a second server would run one, racing the server's own.
            let other = try Self.worker(ledger)
            let racing = Task { await other.run() }
            defer { racing.cancel() }
            let (_, production) = try await ledger.orderAndBuy(user: "u-info", product: "com.example.coins100", appleId: "apple-info")
            #expect(try await ledger.submit(user: "u-info", purchase: production).outcome == "delivered")
            let (_, sandbox) = try await ledger.orderAndBuy(
                user: "u-info-sb", product: "com.example.removeads", appleId: "apple-info-sb", environment: "Sandbox")
            #expect(try await ledger.submit(user: "u-info-sb", purchase: sandbox).outcome == "delivered")

            try await ledger.eventually("Apple's answers are recorded") { try await ledger.count("TransactionInfoRecorded") >= 2 }
            let server = try #require(ledger.server.transactionInfoWorker)
            let (serverPasses, otherPasses) = (server.passes, other.passes)
            try await ledger.eventually("both workers passed three more times") {
                server.passes >= serverPasses + 3 && other.passes >= otherPasses + 3
            }
            // A third, by hand, finds nothing left to ask.
            #expect(try await Self.worker(ledger).runOnce() == TransactionInfoWorker.Summary())

            let infos = try await Self.recorded(ledger)
            #expect(infos.map(\.transactionId).sorted() == [production.transactionId, sandbox.transactionId].sorted(), "one each: \(infos)")
            // At most one question per worker that raced for it (two running), none after.
            let calls = ledger.simulator.serverAPICalls(to: .transactionInfo)
            #expect((2...4).contains(calls), "\(calls) calls")

            let service = ledger.server.service
            for (purchase, environment) in [(production, "Production"), (sandbox, "Sandbox")] {
                let info = try #require(infos.first { $0.transactionId == purchase.transactionId })
                #expect(info.originalTransactionId == purchase.transaction.originalTransactionId)
                #expect(info.environment == environment)
                #expect(info.storefront == purchase.transaction.storefront)
                #expect(info.priceMilliunits == purchase.transaction.priceMilliunits)
                #expect(info.currency == purchase.transaction.currency)
                #expect(info.source == PurchaseService.transactionInfoSource)
                // The document is Apple's JWS byte for byte: it verifies and says what was recorded.
                let document = try #require(try await service.documents.document(info.documentSha256))
                #expect(DocumentStore.name(of: document.bytes) == info.documentSha256)
                let bytes = document.content
                let jws = String(decoding: bytes, as: UTF8.self)
                #expect(jws.split(separator: ".", omittingEmptySubsequences: false).count == 3, "a compact JWS, not Apple's JSON body")
                let signed = try await service.signedData.verifyTransaction(jws).payload
                #expect(signed.transactionId == purchase.transactionId)
                #expect(signed.storefront == info.storefront)
                #expect(signed.price == info.priceMilliunits)
                #expect(signed.currency == info.currency)
                #expect(try await Self.documentKind(ledger, info.documentSha256) == "apple_transaction_info")
            }
            #expect(ledger.simulator.serverAPICalls(to: .transactionInfo) == calls, "nothing asked once recorded")
            racing.cancel()
            await racing.value
        }
    }

    @Test("a sale made through a signed transaction is never asked about")
    func signedSalesAreNotAsked() async throws {
        try await LedgerHarness.with(askApple: true, transactionInfoInterval: .milliseconds(50)) { ledger in
            let (_, signed) = try await ledger.orderAndBuy(user: "u-signed", product: "com.example.coins100", appleId: "apple-signed")
            let answer = try await ledger.post("/v1/transactions", ["user_id": "u-signed", "signed_transaction": signed.signedTransaction])
            #expect(answer.outcome == "delivered")
            // A receipt-only sale after it: once it is recorded, the worker has read past both.
            let (_, receipt) = try await ledger.orderAndBuy(user: "u-receipt", product: "com.example.coins100", appleId: "apple-receipt")
            #expect(try await ledger.submit(user: "u-receipt", purchase: receipt).outcome == "delivered")
            try await ledger.eventually("the receipt-only sale is recorded") { try await ledger.count("TransactionInfoRecorded") == 1 }
            let worker = try #require(ledger.server.transactionInfoWorker)
            let passes = worker.passes
            try await ledger.eventually("the worker passed three more times") { worker.passes >= passes + 3 }
            #expect(try await Self.recorded(ledger).map(\.transactionId) == [receipt.transactionId])
            #expect(ledger.simulator.serverAPICalls(to: .transactionInfo) == 1, "Apple was asked about the receipt's sale only")
        }
    }

    @Test("without the App Store Server API nothing is asked")
    func notConfigured() async throws {
        try await LedgerHarness.with(transactionInfoInterval: .milliseconds(50)) { ledger in
            #expect(ledger.server.service.serverAPI == nil)
            #expect(ledger.server.transactionInfoWorker == nil, "no worker runs")
            let (_, purchase) = try await ledger.orderAndBuy(user: "u-plain", product: "com.example.coins100", appleId: "apple-plain")
            #expect(try await ledger.submit(user: "u-plain", purchase: purchase).outcome == "delivered")
            #expect(ledger.simulator.serverAPICalls.values.reduce(0, +) == 0)
            #expect(try await ledger.count("TransactionInfoRecorded") == 0)
        }
    }

    @Test("a transaction Apple does not know records nothing and is not asked about again that day; Apple's own answer then records it")
    func unknownToApple() async throws {
        try await LedgerHarness.with(askApple: true) { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u-unknown", product: "com.example.coins100", appleId: "apple-unknown")
            #expect(try await ledger.submit(user: "u-unknown", purchase: purchase).outcome == "delivered")
            // Another Apple, with the same credentials, that never sold it: 404 4040010.
            let pem = try #require(ledger.serverAPIKeyPEM)
            var configuration = AppleSimulator.Configuration(machineClock: .system)
            configuration.serverAPI = try ServerAPIAuthentication(
                privateKeyPEM: pem, issuerId: LedgerHarness.issuerId, keyId: LedgerHarness.keyId, bundleId: LedgerHarness.bundleId)
            let stranger = try await AppleSimulatorServer(simulator: try AppleSimulator(configuration: configuration)).start()
            let result: Result<Void, any Error>
            do {
                let clients = try await ServerAPIClients(
                    configuration: ServerAPIConfiguration(
                        issuerId: LedgerHarness.issuerId, keyId: LedgerHarness.keyId, privateKeyPEM: pem, bundleId: LedgerHarness.bundleId,
                        baseURL: stranger.baseURL, baseDelay: .milliseconds(20), maximumDelay: .milliseconds(200)),
                    bundleIds: [LedgerHarness.bundleId], clock: .system)
                let worker = try Self.worker(ledger, clients: clients)
                let first = try await worker.runOnce()
                #expect(first.notRecorded == 1 && first.recorded == 0, "\(first)")
                #expect(stranger.simulator.serverAPICalls(to: .transactionInfo) == 1)
                let second = try await worker.runOnce()
                #expect(second == TransactionInfoWorker.Summary(), "\(second)")
                #expect(stranger.simulator.serverAPICalls(to: .transactionInfo) == 1, "not asked again within the day")
                #expect(worker.waitingCount == 1)
                #expect(try await ledger.count("TransactionInfoRecorded") == 0)
                result = .success(())
            } catch {
                result = .failure(error)
            }
            try? await stranger.stop()
            try result.get()
            #expect(try await Self.worker(ledger).runOnce().recorded == 1)
            #expect(try await Self.recorded(ledger).map(\.transactionId) == [purchase.transactionId])
        }
    }

    @Test("Apple down (5xx) or rate limiting records nothing and ends the pass; a Retry-After is waited; the next pass records the sale")
    func appleUnavailable() async throws {
        try await LedgerHarness.with(askApple: true) { ledger in
            let (_, purchase) = try await ledger.orderAndBuy(user: "u-down", product: "com.example.coins100", appleId: "apple-down")
            #expect(try await ledger.submit(user: "u-down", purchase: purchase).outcome == "delivered")
            ledger.simulator.failNextServerAPICalls(100, with: .serverError(status: 503), endpoint: .transactionInfo)
            let worker = try Self.worker(ledger)
            let down = try await worker.runOnce()
            #expect(down.appleUnavailable && down.recorded == 0 && down.notRecorded == 0, "\(down)")
            #expect(try await ledger.count("TransactionInfoRecorded") == 0)
            #expect(worker.waitingCount == 0, "an outage is no answer: asked again next pass, not in a day")
            ledger.simulator.clearServerAPIFailures()
            let up = try await worker.runOnce()
            #expect(up.recorded == 1, "\(up)")

            // Rate limited for longer than the client waits: the worker keeps away until then.
            let (_, later) = try await ledger.orderAndBuy(user: "u-down-2", product: "com.example.coins100", appleId: "apple-down-2")
            #expect(try await ledger.submit(user: "u-down-2", purchase: later).outcome == "delivered")
            ledger.simulator.failNextServerAPICalls(1, with: .rateLimited(retryAfterSeconds: 3600), endpoint: .transactionInfo)
            let before = ledger.simulator.serverAPICalls(to: .transactionInfo)
            let limited = try await worker.runOnce()
            #expect(limited.appleUnavailable, "\(limited)")
            #expect(ledger.simulator.serverAPICalls(to: .transactionInfo) == before + 1)
            #expect(try await worker.runOnce() == TransactionInfoWorker.Summary())
            #expect(ledger.simulator.serverAPICalls(to: .transactionInfo) == before + 1, "Retry-After is honoured")
            // Another worker (another server) was not told to wait, and records it.
            #expect(try await Self.worker(ledger).runOnce().recorded == 1)
            #expect(try await Self.recorded(ledger).count == 2)
        }
    }
}
