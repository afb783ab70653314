import Crypto
import Primitives

/// A page of Apple's notification history as the ledger keeps it (docs/erasure.md, "Documents").
enum NotificationHistoryPage {
    /// `body` with each item's `signedPayload` replaced by `signedPayloadSha256`, the SHA-256 of
    /// the JWS text. The page names many people, and a document is sealed for one: each payload
    /// is recorded as its own notification, sealed for its person, and the page keeps what says
    /// which (the hash), Apple's send attempts, and its pagination. A body that is not the JSON
    /// Apple documents is kept as it came.
    static func withoutPayloads(_ body: [UInt8]) -> [UInt8] {
        guard case .object(var page)? = JSONValue.parsedQuickly(body), case .array(let items)? = page["notificationHistory"] else { return body }
        page["notificationHistory"] = .array(items.map { item in
            guard case .object(var fields) = item, case .string(let jws)? = fields["signedPayload"] else { return item }
            fields["signedPayload"] = nil
            fields["signedPayloadSha256"] = .string(Hex.encode(SHA256.hash(data: Array(jws.utf8))))
            return .object(fields)
        })
        return JSONValue.object(page).sortedCompactJSON()
    }
}
