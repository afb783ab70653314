/// The app's other backend, which pulls instead of being told: it reads `GET /v1/events` as
/// docs/webhooks.md's consumer does, resuming each page after the last event it kept, with that
/// event's hash (`after_hash`); then shows what it does when the ledger answers that its last
/// event is gone (409 `history_diverged`, as after a restore to an earlier point): it steps back
/// through what it kept until the ledger holds it, and reads on from there.
enum DemoFeed {
    static func consume(_ script: DemoScript) async throws {
        var kept: [(position: Int, hash: String)] = []
        var messages = 0
        func resume(after index: Int?) -> String {
            guard let index else { return "/v1/events?after=0&limit=500" }
            return "/v1/events?after=\(kept[index].position)&after_hash=\(kept[index].hash)&limit=500"
        }
        while true {
            let (status, page) = try await script.read(resume(after: kept.indices.last))
            guard status == 200 else { throw DemoError("the feed answered \(status): \(page)") }
            let events = page["events"] as? [[String: Any]] ?? []
            if events.isEmpty { break }
            messages += events.count
            for case let data? in events.map({ $0["data"] as? [String: Any] }) {
                guard let position = data["position"] as? Int, let hash = data["hash"] as? String, kept.last?.position != position else { continue }
                kept.append((position, hash))
            }
        }
        guard let last = kept.last else { return }
        print("\nthe app's feed consumer (GET /v1/events, each page resumed with after_hash): \(messages) messages of \(kept.count) ledger events, up to position \(last.position)")

        // As after a restore to an earlier point, the event it holds last is not in the log: shown
        // here with its hash altered, as the hash of an event written there since would be.
        let lostHash = String(last.hash.map { $0 == "0" ? "1" : "0" })
        let (status, answer) = try await script.read("/v1/events?after=\(last.position)&after_hash=\(lostHash)")
        let code = (answer["error"] as? [String: Any])?["code"] as? String ?? "-"
        let head = (answer["head"] as? [String: Any])?["position"] as? Int ?? -1
        print("  resuming after a last event the log does not hold (as a restore would leave it): \(status) \(code), the log's head at \(head)")
        // It steps back through what it kept until the ledger holds one.
        for index in stride(from: kept.count - 2, through: 0, by: -1) {
            let (status, _) = try await script.read(resume(after: index))
            if status == 200 {
                print("  stepped back to position \(kept[index].position) (hash \(kept[index].hash.prefix(16))…), which the log holds: \(status); it reads on from there (after a real restore, the events past it have new ids)")
                return
            }
        }
    }
}
