import HTTPTypes
import LedgerConsole
import Hummingbird
import Logging
import NIOCore

/// The context of one API request: its request id (echoed in `X-Request-ID` and in every log
/// line of the request) and who it was authenticated as.
public struct LedgerRequestContext: RequestContext, ConsoleRequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Taken from the request's `X-Request-ID` when it sends a usable one, else made here.
    public var requestID: String = ""
    /// The scope of the bearer token the request carried, once authenticated.
    public var scope: APIScope?
    /// The token's name for the events' metadata (`api:<first 6 chars of its sha256>`).
    public var actor: String = "anonymous"
    /// The app the token is limited to (`token:scope@BUNDLE_ID`); nil: every app served.
    public var app: String?

    /// The peer's address, for the console's sign-in limit per client (behind a proxy, the
    /// proxy's).
    public let remoteAddress: SocketAddress?

    public init(source: Source) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// Bodies over 1 MB are refused with 413 (docs/http-api.md).
    public var maxUploadSize: Int { APILimits.maximumBodyBytes }
}

public enum APILimits {
    public static let maximumBodyBytes = 1 << 20
}
