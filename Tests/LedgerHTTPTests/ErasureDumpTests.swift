import Foundation
import LedgerWebhooks
import Postgres
import Primitives
import Spawning
import TestSupport
import Testing

/// Erasure seen from a copy of the database (docs/erasure.md, issue 40): an operator's backup, or
/// whoever reads one, holds no readable trace of an erased person. The search reads the dump as
/// such a reader would, with Apple's documents decoded: a token hides in a JWS inside a JWS
/// inside a bytea, where a search of the plain text never looks.
@Suite struct ErasureDumpTests {
    /// A spend's reason, as an app may word it: about the person.
    static let danasWords = "a birthday gift for her sister in flat 9C"

    @Test("after an erasure, a pg_dump of the ledger's schema, Apple's documents decoded, holds neither the person's id nor their app account tokens nor their words; the chain verifies and revenue is unchanged")
    func dumpHoldsNothingOfThem() async throws {
        let receiver = WebhookReceiver(signer: try WebhookFlowTests.signer())
        try await receiver.start()
        defer { Task { await receiver.stop() } }
        try await LedgerHarness.with(webhooks: [WebhookEndpoint(name: "backend", url: receiver.url)]) { ledger in
            let dana = "dana.dump@example.com"
            let encoded = try #require(dana.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let path = "/v1/users/\(encoded)"
            var tokens: Set<String> = []

            // StoreKit 1: coins, delivered from the receipt.
            let (coinsOrder, coins) = try await ledger.orderAndBuy(user: dana, product: "com.example.coins100", appleId: "apple-dana")
            tokens.formUnion(Self.tokens(in: coinsOrder))
            let receipt = try await ledger.submit(user: dana, purchase: coins)
            #expect(receipt.outcome == "delivered", "\(receipt.json)")
            tokens.formUnion(Self.tokens(in: receipt.json))

            // StoreKit 2: Apple signs the order's token into the transaction, so the ledger
            // keeps it inside a document as well as in its events.
            let (adsOrder, ads) = try await ledger.orderAndBuy(user: dana, product: "com.example.removeads", appleId: "apple-dana")
            tokens.formUnion(Self.tokens(in: adsOrder))
            let adsToken = try #require(adsOrder["app_account_token"] as? String)
            let segments = ads.signedTransaction.split(separator: ".")
            try #require(segments.count == 3)
            let payload = try #require(Base64URL.decode(segments[1]))
            let signed = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
            #expect((signed["appAccountToken"] as? String)?.lowercased() == adsToken.lowercased())
            let transaction = try await ledger.post("/v1/transactions", ["user_id": dana, "signed_transaction": ads.signedTransaction])
            #expect(transaction.status == 200 && transaction.outcome == "delivered", "\(transaction.json)")
            tokens.formUnion(Self.tokens(in: transaction.json))

            let spent = try await ledger.post(path + "/spend", ["unit": "coins", "amount": 10, "spend_id": "dump-1", "reason": Self.danasWords])
            #expect(spent.status == 200, "\(spent.json)")
            #expect(try await ledger.post(path + "/consent", ["consumption_data": true]).status == 200)
            let view = try await ledger.get(path)
            #expect(view.status == 200, "\(view.json)")
            tokens.formUnion(Self.tokens(in: view.json))
            // Otherwise a clean search for her tokens would prove nothing.
            #expect(tokens.count >= 2, "\(tokens)")

            let (staysOrder, stays) = try await ledger.orderAndBuy(user: "stays", product: "com.example.coins100", appleId: "apple-stays")
            #expect(try await ledger.submit(user: "stays", purchase: stays).outcome == "delivered")
            let staysOrderId = try #require(staysOrder["order_id"] as? String)

            // Apple refunds the StoreKit 2 purchase: its notification names her token too.
            _ = try await ledger.simulator.refund(transactionId: ads.transactionId, reason: 1)
            try await ledger.eventually("the refund is recorded") { try await ledger.count("PurchaseRefunded") == 1 }
            try await ledger.eventually("the refund is in the feed") {
                try await WebhookFlowTests.feed(ledger).contains { $0["type"] as? String == "purchase.refunded" }
            }
            let feed = try await WebhookFlowTests.feed(ledger)
            try await ledger.eventually("the webhooks are told", within: .seconds(30)) { receiver.acknowledged.count >= feed.count }

            func revenue() async throws -> LedgerHarness.Answer {
                try await ledger.get("/v1/reports/revenue?from=2000-01-01&to=2100-01-01", token: LedgerHarness.financeToken)
            }
            // The refund comes in through a notification, not a request of ours whose writes a
            // read waits for: the report is compared only once it counts it.
            try await ledger.eventually("revenue counts the refund") {
                let totals = try await revenue().json["totals"] as? [[String: Any]] ?? []
                return totals.contains { $0["refunds"] as? Int == 1 }
            }
            let before = try await revenue()
            #expect(before.status == 200)

            let erased = try await ErasureTests.erase(ledger, encoded, requestId: "dump-erasure")
            #expect(erased.status == 200, "\(erased.json)")
            // Dumped once the deliverer is done with her: its rows are in the dump too.
            try await ledger.eventually("user.erased reaches the endpoint", within: .seconds(30)) {
                receiver.acknowledged.contains { $0.type == "user.erased" }
            }

            let verify = try await LedgerProcess.run(["verify"], environment: ["DATABASE_URL": ledger.conninfo])
            #expect(verify.exit == ProcessExit(status: 0, signaled: false), "\(verify.output)")
            let after = try await revenue()
            #expect(NSDictionary(dictionary: after.json).isEqual(to: before.json))
            // A replay after the erasure rebuilds what the live tables hold: projections keep
            // handles, so erasing rewrote none of them and a rebuild opens none.
            let replay = try await LedgerProcess.run(["replay", "--dry-run"], environment: ["DATABASE_URL": ledger.conninfo])
            #expect(replay.exit == ProcessExit(status: 0, signaled: false), "\(replay.output)")
            #expect(replay.output.contains("nothing to change"), "\(replay.output)")

            let dump = try await Self.dump(ledger)
            let expanded = Self.expanded(dump)

            // Controls: what stays in clear by design is found, so a clean search means something.
            // Not the id "stays" itself: every user id is sealed (SealedPeopleTests), erased or not.
            #expect(expanded.contains(staysOrderId), "the ledger's own ids stay in clear")
            #expect(expanded.contains(stays.transactionId), "Apple's ids stay in clear")
            // A receipt is a bytea of base64: read in clear today (PLSIM1, the simulator's
            // receipt), or as an envelope once documents are sealed (PLSEAL1, docs/erasure.md).
            #expect(expanded.contains("PLSIM1.") || expanded.contains("PLSEAL1"), "no document was decoded from the dump")

            for needle in [dana, encoded, "dana.dump", Self.danasWords] {
                #expect(!expanded.contains(needle), "the dump holds \(needle): …\(Self.context(of: needle, in: expanded))…")
            }
            for token in tokens.sorted() {
                for form in [token.lowercased(), token.uppercased()] {
                    #expect(!expanded.contains(form), "the dump holds her app account token \(form): …\(Self.context(of: form, in: expanded))…")
                }
            }
        }
    }

    @Test("the dump's expansion finds a token Apple hides in a JWS inside a notification's JWS stored as a bytea, and a receipt's base64 with its slashes escaped")
    func expansionFindsWhatDocumentsHide() throws {
        let token = UUID().uuidString.lowercased()
        let words = "a receipt of \(UUID().uuidString)"
        func jws(_ payload: [String: Any]) throws -> String {
            let header = Base64URL.encode(Data(#"{"alg":"ES256","x5c":["MIIBkTCCATegAwIBAgIU"]}"#.utf8))
            let body = Base64URL.encode(try JSONSerialization.data(withJSONObject: payload))
            return "\(header).\(body).\(Base64URL.encode(Data(repeating: 7, count: 64)))"
        }
        let signedTransaction = try jws(["transactionId": "2000000000000001", "appAccountToken": token])
        let notification = try jws(["notificationType": "REFUND", "data": ["signedTransactionInfo": signedTransaction]])
        // Leading bytes whose base64 starts "+/": JSON may write the slash as `\/`.
        let receipt = Data([0xfb, 0xff] + Array(words.utf8)).base64EncodedString()
        #expect(receipt.hasPrefix("+/"))
        let escaped = receipt.replacingOccurrences(of: "/", with: "\\/")
        let document = #"{"signedPayload":"\#(notification)","receipt-data":"\#(escaped)"}"#
        // A documents row as pg_dump's COPY writes it: the bytea in hex, its backslash doubled.
        let row = "notification_v2\t\\\\x\(Hex.encode(Array(document.utf8)))\t2026-01-01 00:00:00+00\n"

        #expect(!row.contains(token) && !row.contains(words))
        // Three layers deep: the bytea, the notification's payload, the transaction's payload.
        #expect(!Self.expanded(row, rounds: 2).contains(token))
        #expect(Self.expanded(row).contains(token))
        #expect(Self.expanded(row).contains(words))
    }

    // MARK: - The dump

    /// A plain `pg_dump` of the harness's schema (`TestDatabase.withSchema` names one per test
    /// and sets it as the conninfo's search_path), as an operator's backup holds it.
    static func dump(_ ledger: LedgerHarness) async throws -> String {
        let schema = try await ledger.pool.withConnection { try $0.query("SELECT current_schema()::text").first!.decode(0, as: String.self) }
        return try await TemporaryFolder.with("erasure-dump") { folder in
            let file = folder.appendingPathComponent("ledger.sql")
            // To a file: the child's output mixes standard error into standard output.
            let (exit, output) = try await ChildProcess.run(
                try pgDump(), ["--dbname=\(ledger.conninfo)", "--schema=\(schema)", "--no-owner", "--no-privileges", "--file=\(file.path)"])
            try #require(exit == .success, "pg_dump: \(output)")
            let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
            try #require(text.contains("COPY \(schema).events"), "a dump without the log: \(text.prefix(2_000))")
            return text
        }
    }

    /// The pg_dump of the cluster Tools/test starts (`PL_PGBIN`: a pg_dump older than the
    /// server refuses to dump it), else the first on PATH.
    static func pgDump() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        let folders = [environment["PL_PGBIN"] ?? ""].filter { !$0.isEmpty } + (environment["PATH"] ?? "").split(separator: ":").map(String.init)
        for folder in folders where FileManager.default.isExecutableFile(atPath: "\(folder)/pg_dump") {
            return "\(folder)/pg_dump"
        }
        throw HarnessError("no pg_dump in PL_PGBIN or on PATH: run the tests with Tools/test")
    }

    /// Every `app_account_token` an answer holds, at any depth.
    static func tokens(in json: Any) -> [String] {
        if let object = json as? [String: Any] {
            var found: [String] = []
            for (key, value) in object {
                if key == "app_account_token", let token = value as? String { found.append(token) }
                found += tokens(in: value)
            }
            return found
        }
        if let array = json as? [Any] {
            return array.flatMap { tokens(in: $0) }
        }
        return []
    }

    /// Where `needle` first occurs in `text`, with some text either side: a failure then says
    /// which table or document still holds it.
    static func context(of needle: String, in text: String) -> String {
        guard let range = text.range(of: needle) else { return "" }
        let start = text.index(range.lowerBound, offsetBy: -200, limitedBy: text.startIndex) ?? text.startIndex
        let end = text.index(range.upperBound, offsetBy: 200, limitedBy: text.endIndex) ?? text.endIndex
        return String(text[start..<end])
    }

    // MARK: - Documents decoded

    /// `text` followed by what a reader of it decodes without any key, `rounds` times over, each
    /// round reading what the one before it decoded:
    /// - each `\x…` hex literal, as bytea is written (pg_dump's COPY doubles the backslash);
    /// - each run of 16 or more base64 or base64url characters, in either alphabet, padding or
    ///   not. A JWS's dots end a run, so each of its segments is one.
    ///
    /// Apple's documents nest that deep: a notification is a bytea of JSON whose signed
    /// payload holds a signed transaction, whose payload holds the app account token; a receipt
    /// is a bytea of base64. Decoded nonsense is kept, not judged: deciding what looks like text
    /// would be one more place for a leak to slip through.
    static func expanded(_ text: String, rounds: Int = 3) -> String {
        var layers = [text]
        for _ in 0..<rounds {
            let decoded = decodings(in: layers[layers.count - 1])
            if decoded.isEmpty { break }
            layers.append(decoded.joined(separator: "\n"))
        }
        return layers.joined(separator: "\n")
    }

    /// One round of `expanded`: what each hex literal and each base64 run of `text` decodes to.
    static func decodings(in text: String) -> [String] {
        let bytes = withoutSlashEscapes(Array(text.utf8))
        var decoded: [String] = []
        var index = 0
        while index + 1 < bytes.count {
            guard bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "x") else {
                index += 1
                continue
            }
            var end = index + 2
            while end < bytes.count, isHexDigit(bytes[end]) { end += 1 }
            let count = (end - index - 2) & ~1
            if count >= 2, let hex = Hex.decode(digits: bytes[(index + 2)..<(index + 2 + count)]) {
                decoded.append(String(decoding: hex, as: UTF8.self))
            }
            index = end
        }
        index = 0
        while index < bytes.count {
            guard isBase64(bytes[index]) else {
                index += 1
                continue
            }
            var end = index
            while end < bytes.count, isBase64(bytes[end]) { end += 1 }
            var run = Array(bytes[index..<end])
            // One character past a whole number of quartets holds no byte: a run that took in a
            // character next to the encoding still decodes.
            if run.count % 4 == 1 { run.removeLast() }
            // Base64URL maps its alphabet's two characters and leaves the standard one's.
            if run.count >= 16, let data = Base64URL.decode(String(decoding: run, as: UTF8.self)) {
                decoded.append(String(decoding: data, as: UTF8.self))
            }
            index = end
        }
        return decoded
    }

    /// `bytes` with the backslashes before a slash dropped: JSON may write `/` as `\/`, and COPY
    /// doubles the backslash, either of which would cut a base64 run in two.
    static func withoutSlashEscapes(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            var next = index
            while next < bytes.count, bytes[next] == UInt8(ascii: "\\") { next += 1 }
            if next > index, next < bytes.count, bytes[next] == UInt8(ascii: "/") {
                index = next
                continue
            }
            if next > index {
                out.append(contentsOf: bytes[index..<next])
                index = next
                continue
            }
            out.append(bytes[index])
            index += 1
        }
        return out
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): return true
        default: return false
        }
    }

    static func isBase64(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default: return false
        }
    }
}
