import Foundation
import Ledger
@testable import LedgerHTTP
import Testing

/// docs/http-api.md's answers list every field: an unknown one is `null`, never a missing key.
@Suite("Answers write their unknown fields as null")
struct AnswerNullsTests {
    func json(_ value: some Encodable) throws -> String {
        String(decoding: try LedgerJSON.encoder.encode(value), as: UTF8.self)
    }

    @Test("an extension without a known date, and a JWS offer signature without a token or an expiry, keep every key")
    func nullsAreWritten() throws {
        #expect(try json(APIAnswers.Extended(originalTransactionId: "1000", effectiveDate: nil, newExpiresAt: nil))
            == #"{"effective_date":null,"new_expires_at":null,"original_transaction_id":"1000"}"#)
        #expect(try json(APIAnswers.Extended(originalTransactionId: "1000", effectiveDate: "2026-11-26T00:00:00Z", newExpiresAt: nil))
            == #"{"effective_date":"2026-11-26T00:00:00Z","new_expires_at":null,"original_transaction_id":"1000"}"#)
        #expect(try json(APIAnswers.OfferSignature(signature: "s", keyId: "K", nonce: "n", timestamp: 7, appAccountToken: nil, expiresAt: nil))
            == #"{"app_account_token":null,"expires_at":null,"key_id":"K","nonce":"n","signature":"s","timestamp":7}"#)
    }
}
