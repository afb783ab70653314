import Foundation
import NIOHTTP1
import Testing

@Suite("Bad input gets the right 4xx with a JSON error code, never a 5xx, and appends nothing")
struct BadInputTests {
    @Test("malformed bodies, wrong types, missing fields, bad base64, huge bodies, unknown routes and tokens")
    func badInput() async throws {
        try await LedgerHarness.with { ledger in
            let before = try await ledger.pool.withConnection { try $0.query("SELECT count(*) FROM events")[0].decode(0, as: Int64.self) }
            let cases: [(String, String, String?, String?, Int, String)] = [
                ("POST", "/v1/receipts", "{not json", LedgerHarness.appToken, 400, "invalid_request"),
                ("POST", "/v1/receipts", #"{"user_id": 5, "receipt_data": "AAAA"}"#, LedgerHarness.appToken, 400, "invalid_request"),
                ("POST", "/v1/receipts", #"{"user_id": "u1"}"#, LedgerHarness.appToken, 400, "invalid_request"),
                ("POST", "/v1/receipts", #"{"user_id": "u1", "receipt_data": "%%% not base64"}"#, LedgerHarness.appToken, 400, "invalid_request"),
                ("POST", "/v1/receipts", #"{"user_id": "", "receipt_data": "AAAA"}"#, LedgerHarness.appToken, 400, "invalid_request"),
                ("POST", "/v1/transactions", #"{"user_id": "u1", "signed_transaction": "abc"}"#, LedgerHarness.appToken, 400, "invalid_request"),
                ("POST", "/v1/orders", #"{"user_id": "u1", "product_id": "com.example.nope"}"#, LedgerHarness.appToken, 404, "unknown_product"),
                ("POST", "/v1/orders", #"{"user_id": "u1", "product_id": "com.example.coins100", "quantity": 0}"#, LedgerHarness.appToken, 400, "invalid_request"),
                ("POST", "/v1/orders", #"{"user_id": "u1", "product_id": "com.example.coins100"}"#, nil, 401, "unauthorized"),
                ("POST", "/v1/orders", #"{"user_id": "u1", "product_id": "com.example.coins100"}"#, "wrong-token-123456", 401, "unauthorized"),
                ("POST", "/v1/orders", #"{"user_id": "u1", "product_id": "com.example.coins100"}"#, LedgerHarness.financeToken, 403, "forbidden"),
                ("GET", "/v1/users/u1", nil, nil, 401, "unauthorized"),
                ("GET", "/v1/nowhere", nil, LedgerHarness.appToken, 404, "not_found"),
                ("GET", "/v1/subscriptions/12345", nil, LedgerHarness.appToken, 404, "not_found"),
                ("POST", "/v1/notifications/apple", #"{"signedPayload": "a.b.c"}"#, nil, 401, "unauthorized"),
                ("POST", "/v1/notifications/apple", #"{"notification_type": "CANCEL", "password": "wrong"}"#, nil, 401, "unauthorized"),
                ("POST", "/v1/notifications/apple", "[1,2]", nil, 400, "invalid_request"),
            ]
            for (method, path, body, token, status, code) in cases {
                let answer = try await ledger.request(method == "GET" ? HTTPMethod.GET : HTTPMethod.POST, path, body: body, token: token)
                #expect(answer.status == status, "\(method) \(path) \(body ?? "")")
                #expect(answer.errorCode == code, "\(method) \(path) \(body ?? "")")
                #expect(answer.header("X-Request-ID") != nil)
            }
            let huge = #"{"user_id": "u1", "receipt_data": ""# + String(repeating: "A", count: 1_100_000) + #""}"#
            let tooLarge = try await ledger.request(.POST, "/v1/receipts", body: huge)
            #expect(tooLarge.status == 413)
            #expect(tooLarge.errorCode == "invalid_request")
            let after = try await ledger.pool.withConnection { try $0.query("SELECT count(*) FROM events")[0].decode(0, as: Int64.self) }
            #expect(after == before)
        }
    }

    @Test("a request id sent by the caller is echoed")
    func requestID() async throws {
        try await LedgerHarness.with { ledger in
            let answer = try await ledger.request(HTTPMethod.GET, "/healthz", token: String?.none, headers: [("X-Request-ID", "abc-123")])
            #expect(answer.status == 200)
            #expect(answer.header("X-Request-ID") == "abc-123")
            #expect(answer.json["database"] as? String == "ok")
        }
    }
}
