import CLibPQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Connection {
    /// Checks, without blocking, that an idle connection is still usable.
    ///
    /// libpq notices a server that went away only on the next I/O. A server shutting down sends
    /// an error and closes the socket, so an idle connection whose socket is readable is read
    /// (`PQconsumeInput`): a dropped connection then reports `CONNECTION_BAD`. Notifications
    /// read on the way stay queued for ``waitForNotifications(timeout:)``.
    func isUsableAfterIdle() -> Bool {
        guard let pgconn, PQstatus(pgconn) == CONNECTION_OK else { return false }
        let socket = PQsocket(pgconn)
        guard socket >= 0 else { return false }
        // A terminated backend first sends its FATAL message, then closes: read until the
        // socket is quiet, so the end of the stream is seen too (bounded, never blocking).
        for _ in 0..<8 {
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 0)
            if ready < 0 { return errno == EINTR }
            if ready == 0 { break }
            guard PQconsumeInput(pgconn) == 1, PQstatus(pgconn) == CONNECTION_OK else { return false }
        }
        return PQstatus(pgconn) == CONNECTION_OK
    }
}
