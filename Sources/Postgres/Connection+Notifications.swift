import CLibPQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A notification received through LISTEN.
public struct PostgresNotification: Sendable, Hashable {
    public var channel: String
    public var payload: String
    /// The server process id of the session that sent it.
    public var pid: Int32

    public init(channel: String, payload: String, pid: Int32) {
        self.channel = channel
        self.payload = payload
        self.pid = pid
    }
}

extension Connection {
    /// Starts listening on a channel (quoted as an identifier; case and dots are kept).
    public func listen(_ channel: String) throws {
        try execute("LISTEN \(identifier: channel)")
    }

    /// Stops listening on a channel.
    public func unlisten(_ channel: String) throws {
        try execute("UNLISTEN \(identifier: channel)")
    }

    /// Sends a notification with `pg_notify` (both bound as parameters). Inside a transaction
    /// it is delivered on commit.
    public func notify(_ channel: String, payload: String) throws {
        try execute("SELECT pg_notify(\(channel), \(payload))")
    }

    /// Waits up to `timeout` for notifications on the channels this connection listens to and
    /// returns those that arrived (in order), or `[]` when none came in time.
    ///
    /// Blocks the calling thread (in `poll`); throws `connectionLost` when the connection breaks.
    public func waitForNotifications(timeout: Duration) throws -> [PostgresNotification] {
        let pgconn = try handle()
        var received = takeNotifications(pgconn)
        if !received.isEmpty { return received }
        try consumeInput(pgconn)
        received = takeNotifications(pgconn)
        if !received.isEmpty { return received }

        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let remaining = clock.now.duration(to: deadline)
            if remaining <= .zero { return [] }
            let (seconds, attoseconds) = remaining.components
            let milliseconds = min(Int64(Int32.max), seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
            let socket = PQsocket(pgconn)
            guard socket >= 0 else {
                throw PostgresError(code: .connectionLost, message: "the connection has no socket")
            }
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(milliseconds))
            if ready < 0 {
                if errno == EINTR { continue }
                throw PostgresError(code: .protocolViolation, message: "poll failed with errno \(errno)")
            }
            if ready > 0 {
                try consumeInput(pgconn)
                received = takeNotifications(pgconn)
                if !received.isEmpty { return received }
            }
        }
    }

    private func consumeInput(_ pgconn: OpaquePointer) throws {
        guard PQconsumeInput(pgconn) == 1 else {
            throw PostgresError(code: isAlive ? .protocolViolation : .connectionLost, message: Self.errorMessage(of: pgconn))
        }
    }

    /// The notifications libpq has already read.
    private func takeNotifications(_ pgconn: OpaquePointer) -> [PostgresNotification] {
        var received = [PostgresNotification]()
        while let notify = PQnotifies(pgconn) {
            defer { PQfreemem(notify) }
            received.append(PostgresNotification(
                channel: String(cString: notify.pointee.relname),
                payload: notify.pointee.extra.map { String(cString: $0) } ?? "",
                pid: notify.pointee.be_pid))
        }
        return received
    }
}
