import HTTPTypes
import Hummingbird
import LedgerStore
import NIOCore
import Sealing

/// Opens every handle in an answer on its way out (docs/erasure.md): the log, the read models
/// and the webhook bodies hold handles where a person's id was, and this is the one place the
/// API and the console turn them back into ids (or `erased:SUBJECT`), escaped for JSON or HTML.
/// `RequestMiddleware` applies it to every answer, error answers included (a refusal may quote
/// the handle of the person it concerns).
enum HandleOpening {
    static func open(_ response: Response, people: People) async throws -> Response {
        var response = response
        let type = response.headers[.contentType] ?? ""
        let escaping: Escaping
        if type.hasPrefix("application/json") {
            escaping = .json
        } else if type.hasPrefix("text/html") {
            escaping = .html
        } else {
            return response
        }
        let collector = Collector()
        try await response.body.write(collector)
        let opened = try await people.open(collector.bytes, escaping: escaping)
        response.body = ResponseBody(byteBuffer: ByteBuffer(bytes: opened))
        return response
    }

    /// Gathers an answer's body: every answer these types carry is built whole in memory first.
    private final class Collector: ResponseBodyWriter {
        var bytes: [UInt8] = []

        func write(_ buffer: ByteBuffer) async throws {
            bytes += buffer.readableBytesView
        }

        func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}
