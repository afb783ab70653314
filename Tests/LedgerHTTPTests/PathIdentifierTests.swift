import Testing

/// Ids in paths arrive as clients encode them (`encodeURIComponent`, `quote(safe='')`), and the
/// bearer scheme in any case: both must reach the same user as the id the purchase named.
@Suite("Path ids are percent-decoded; the bearer scheme is case-insensitive")
struct PathIdentifierTests {
    @Test("a user id with @ and / reads back through its percent-encoded path, with a lower-case bearer scheme")
    func encodedUser() async throws {
        try await LedgerHarness.with { ledger in
            let user = "bob@example.com/eu"
            let (_, purchase) = try await ledger.orderAndBuy(user: user, product: "com.example.coins100", appleId: "apple-bob")
            #expect(try await ledger.submit(user: user, purchase: purchase).outcome == "delivered")
            let read = try await ledger.get("/v1/users/bob%40example.com%2Feu")
            #expect(read.status == 200)
            #expect(read.json["user_id"] as? String == user)
            #expect((read.json["balances"] as? [String: any Sendable])?["coins"] as? Int == 100)
            let lower = try await ledger.request(
                .GET, "/v1/users/bob%40example.com%2Feu", token: nil, headers: [("Authorization", "bearer \(LedgerHarness.appToken)")])
            #expect(lower.status == 200)
            #expect((lower.json["balances"] as? [String: any Sendable])?["coins"] as? Int == 100)
        }
    }
}
