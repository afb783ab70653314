import Postgres
import TestSupport
import Testing

@Suite("LISTEN/NOTIFY between two connections")
struct NotificationTests {
    @Test("a notification reaches the listener with its channel, payload and sender")
    func roundTrip() async throws {
        let channel = #"ledger."Events" 1"#  // quoted as an identifier, never pasted into SQL
        try await TestDatabase.withSchema { conninfo, pool in
            let (received, senderPID, quiet, afterUnlisten) = try await pool.withConnection { listener in
                let sender = try Connection.connect(conninfo, logger: TestDatabase.logger)
                defer { sender.close() }
                try listener.listen(channel)
                let quiet = try listener.waitForNotifications(timeout: .milliseconds(100))
                try sender.transaction { connection in
                    try connection.notify(channel, payload: "position=1 ünïcode 🧾")
                    try connection.notify(channel, payload: "position=2")
                }
                var received = [PostgresNotification]()
                while received.count < 2 {
                    let batch = try listener.waitForNotifications(timeout: .seconds(10))
                    if batch.isEmpty { break }
                    received += batch
                }
                try listener.unlisten(channel)
                try sender.notify(channel, payload: "unheard")
                let afterUnlisten = try listener.waitForNotifications(timeout: .milliseconds(200))
                return (received, sender.backendPID, quiet, afterUnlisten)
            }
            #expect(quiet.isEmpty)
            #expect(received.map(\.payload) == ["position=1 ünïcode 🧾", "position=2"])
            #expect(received.allSatisfy { $0.channel == channel && $0.pid == senderPID })
            #expect(afterUnlisten.isEmpty)
        }
    }
}
