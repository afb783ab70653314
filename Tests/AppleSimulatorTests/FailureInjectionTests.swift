import AppleSimulator
import AsyncHTTPClient
import Foundation
import Testing

@Suite("verifyReceipt fails on demand")
struct FailureInjectionTests {
    @Test("retryable statuses for the next N calls, then normal answers", arguments: [21005, 21009, 21100])
    func nextCalls(status: Int) async throws {
        try await SimulatorHarness.withServer { running in
            let purchase = try await running.simulator.purchase(appleId: "a", productId: "com.example.removeads")
            running.simulator.injectFailure(FailureRule(.status(status), .next(2)))
            let first = try await RawHTTP.verify(running.sandboxURL, receipt: purchase.receiptData).json
            #expect(first?["status"] as? Int == status)
            #expect(first?["is-retryable"] as? Bool == (status == 21100 ? true : nil))
            #expect(try await RawHTTP.verifyStatus(running.sandboxURL, receipt: purchase.receiptData) == status)
            #expect(try await RawHTTP.verifyStatus(running.sandboxURL, receipt: purchase.receiptData) == 0)
        }
    }

    @Test("HTTP 500 and a body that is not JSON, limited to one endpoint")
    func httpAndMalformed() async throws {
        try await SimulatorHarness.withServer { running in
            let purchase = try await running.simulator.purchase(appleId: "a", productId: "com.example.removeads")
            running.simulator.injectFailure(FailureRule(.httpStatus(500), .next(1), endpoint: .sandbox))
            running.simulator.injectFailure(FailureRule(.malformedBody, .next(1), endpoint: .sandbox))
            // The production endpoint is untouched by sandbox-only rules.
            #expect(try await RawHTTP.verifyStatus(running.productionURL, receipt: purchase.receiptData) == 21007)
            let failed = try await RawHTTP.verify(running.sandboxURL, receipt: purchase.receiptData)
            #expect(failed.status == 500)
            let malformed = try await RawHTTP.verify(running.sandboxURL, receipt: purchase.receiptData)
            #expect(malformed.status == 200)
            #expect(malformed.json == nil)
            #expect(try await RawHTTP.verifyStatus(running.sandboxURL, receipt: purchase.receiptData) == 0)
        }
    }

    @Test("a slow answer runs past the client's time-out")
    func slow() async throws {
        try await SimulatorHarness.withServer { running in
            let purchase = try await running.simulator.purchase(appleId: "a", productId: "com.example.removeads")
            running.simulator.injectFailure(FailureRule(.delay(milliseconds: 1_500), .next(1)))
            let body = try JSONSerialization.data(withJSONObject: ["receipt-data": purchase.receiptData])
            await #expect(throws: HTTPClientError.self) {
                _ = try await RawHTTP.post(running.sandboxURL, body: body, timeout: .milliseconds(200))
            }
        }
    }

    @Test("a fraction of calls fails, the same ones for the same seed")
    func fractionIsSeeded() async throws {
        func pattern(seed: UInt64) async throws -> [Int] {
            try await SimulatorHarness.withServer(SimulatorHarness.configuration(seed: seed)) { running in
                let purchase = try await running.simulator.purchase(appleId: "a", productId: "com.example.removeads")
                running.simulator.injectFailure(FailureRule(.status(21005), .fraction(0.5)))
                var statuses: [Int] = []
                for _ in 0..<20 {
                    statuses.append(try await RawHTTP.verifyStatus(running.sandboxURL, receipt: purchase.receiptData) ?? -1)
                }
                return statuses
            }
        }
        let first = try await pattern(seed: 42)
        #expect(try await pattern(seed: 42) == first)
        #expect(first.contains(21005))
        #expect(first.contains(0))
        #expect(Set(first) == [0, 21005])
    }

    @Test("failures are set and cleared through the control API")
    func controlAPI() async throws {
        try await SimulatorHarness.withServer { running in
            let purchase = try await running.simulator.purchase(appleId: "a", productId: "com.example.removeads")
            let created = try await RawHTTP.post(
                "\(running.baseURL)/control/failures", json: ["status": 21009, "next": 5, "endpoint": "sandbox"])
            #expect(created.status == 201)
            #expect(try await RawHTTP.verifyStatus(running.sandboxURL, receipt: purchase.receiptData) == 21009)
            #expect(try await RawHTTP.post("\(running.baseURL)/control/failures", json: ["next": 1]).status == 400)
            var delete = HTTPClientRequest(url: "\(running.baseURL)/control/failures")
            delete.method = .DELETE
            #expect(try await HTTPClient.shared.execute(delete, timeout: .seconds(5)).status.code == 204)
            #expect(try await RawHTTP.verifyStatus(running.sandboxURL, receipt: purchase.receiptData) == 0)
        }
    }
}
