import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Answers a request that is not well-formed HTTP/1.1 with the API's JSON error (400
/// `invalid_request`) and closes the connection, where HummingbirdCore would write a bare 400
/// with no body. Sits in each connection's pipeline after the HTTP codec.
///
/// Not `Sendable`: a channel handler lives on its connection's event loop alone.
final class MalformedRequestHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private enum State { case normal, answerAfterResponse, closeAfterResponse, done }
    /// Requests read whose response has not ended yet (pipelining).
    private var open = 0
    /// Inside a request's body.
    private var reading = false
    private var state = State.normal

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: open += 1; reading = true
        case .end: reading = false
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else { return context.write(data, promise: promise) }
        open -= 1
        context.write(data, promise: promise)
        guard open == 0 else { return }
        switch state {
        case .answerAfterResponse: answer(context)
        case .closeAfterResponse:
            state = .done
            context.flush()
            context.close(promise: nil)
        case .normal, .done: break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // After the first parse error the decoder reports more; one answer is enough.
        guard state == .normal else { return }
        guard error is HTTPParserError else { return context.fireErrorCaught(error) }
        if reading {
            // A broken body: the handler reading it fails and answers; then close.
            state = .closeAfterResponse
            context.fireErrorCaught(error)
        } else if open > 0 {
            // A broken request pipelined after good ones: answer once they are answered.
            state = .answerAfterResponse
        } else {
            answer(context)
        }
    }

    private func answer(_ context: ChannelHandlerContext) {
        state = .done
        let body = ByteBuffer(string: #"{"error":{"code":"invalid_request","message":"the request is not well-formed HTTP/1.1"}}"#)
        var fields = HTTPFields()
        fields[.contentType] = "application/json; charset=utf-8"
        fields[.contentLength] = String(body.readableBytes)
        fields[.connection] = "close"
        fields[.xRequestID] = UUID().uuidString.lowercased()
        context.write(wrapOutboundOut(.head(HTTPResponse(status: .badRequest, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        written.futureResult.whenComplete { _ in bound.value.close(promise: nil) }
    }
}
