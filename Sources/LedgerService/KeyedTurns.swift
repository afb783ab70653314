/// Runs the work of one key at a time within this process, first come first served.
///
/// Spends of one wallet race on the wallet stream's expected version, which stays the guard
/// between servers. Within one server, 64 spends of one wallet racing optimistically make
/// about 64²/2 reads and failed appends before the last one lands (under a loaded machine
/// that took a minute); taking turns first makes it 64 of each.
actor KeyedTurns {
    /// Keys whose turn is taken, with who waits for it, in order.
    private var waiting: [String: [CheckedContinuation<Void, Never>]] = [:]

    func run<T: Sendable>(_ key: String, _ work: @Sendable () async throws -> T) async throws -> T {
        await take(key)
        do {
            let result = try await work()
            give(key)
            return result
        } catch {
            give(key)
            throw error
        }
    }

    private func take(_ key: String) async {
        guard waiting[key] != nil else {
            waiting[key] = []
            return
        }
        await withCheckedContinuation { waiting[key, default: []].append($0) }
    }

    private func give(_ key: String) {
        guard var queue = waiting[key], !queue.isEmpty else {
            waiting[key] = nil
            return
        }
        let next = queue.removeFirst()
        waiting[key] = queue
        next.resume()
    }
}
