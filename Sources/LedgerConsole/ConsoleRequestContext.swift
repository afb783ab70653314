import Hummingbird
import NIOCore

/// What the console needs of the server's request context: the request id that every log line
/// of the request carries, and the client's address, which sign-in attempts are counted by.
/// LedgerHTTP's context conforms; the console never sees bearer tokens.
public protocol ConsoleRequestContext: RequestContext {
    var requestID: String { get }
    /// The connected peer's IP address; nil when unknown. By default the `remoteAddress` of a
    /// context that is a `RemoteAddressRequestContext`. Behind a reverse proxy this is the
    /// proxy's address: then every client shares one sign-in limit.
    var clientAddress: String? { get }
}

extension ConsoleRequestContext {
    public var clientAddress: String? {
        guard let address = (self as? any RemoteAddressRequestContext)?.remoteAddress else { return nil }
        return address.ipAddress ?? address.pathname
    }
}
