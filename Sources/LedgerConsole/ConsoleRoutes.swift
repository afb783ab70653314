import AppStore
import Foundation
import HTTPTypes
import Hummingbird
import LedgerService
import LedgerStore
import Logging
import NIOCore
import Primitives

/// The console's routes under `/console/`. Every page but sign-in needs a session, checked
/// before a request's body is read; every POST that changes something needs the session's CSRF
/// token; every page view is logged with the request id and the token's name. Wrong tokens at
/// sign-in are limited per client address and per token prefix (`SignInLimits`).
public struct ConsoleRoutes<Context: ConsoleRequestContext>: Sendable {
    let console: Console

    public func register(on router: Router<Context>) {
        router.get("console/") { request, context in await guarded(nil, request, context) { session in
            ConsoleRenderer.redirect(session.role.home)
        } }
        router.get("console/static/console.css") { _, _ in
            var headers = ConsoleRenderer.securityHeaders
            headers[.contentType] = "text/css; charset=utf-8"
            headers[.cacheControl] = "max-age=300"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: console.renderer.stylesheet))
        }
        router.get("console/sign-in") { request, context in signInPage(message: nil, status: .ok) }
        router.post("console/sign-in") { request, context in await signIn(request, context) }
        router.post("console/sign-out") { request, context in await signOut(request, context) }
        RevenuePage(console: console).register(on: router, routes: self)
        MRRPage(console: console).register(on: router, routes: self)
        CohortsPage(console: console).register(on: router, routes: self)
        RefundsPage(console: console).register(on: router, routes: self)
        SubscriptionsPage(console: console).register(on: router, routes: self)
        LookupPage(console: console).register(on: router, routes: self)
        ActForms(console: console).register(on: router, routes: self)
        ReconciliationPage(console: console).register(on: router, routes: self)
        WebhooksPage(console: console).register(on: router, routes: self)
    }

    /// Runs a page for a signed-in user allowed in `area`: sign-in first when there is no
    /// session, 403 for a role without the area, errors as pages. Logs the view. Nothing of
    /// the request's body has been read when `page` starts.
    func guarded(
        _ area: ConsoleArea?, _ request: Request, _ context: Context, page: (ConsoleSession) async throws -> Response
    ) async -> Response {
        var logger = console.logger
        logger[metadataKey: "request_id"] = .string(context.requestID)
        let session: ConsoleSession?
        do {
            session = try await ConsoleCookies.value(ConsoleCookies.session, in: request).asyncFlatMap { try await console.sessions.find(cookie: $0) }
        } catch {
            return failure(error, session: nil, logger: logger)
        }
        guard let session else {
            logger.info("console page", metadata: ["path": "\(request.uri.path)", "token": "none", "status": "303"])
            return Self.closingUnread(ConsoleRenderer.redirect("/console/sign-in"), for: request)
        }
        logger[metadataKey: "token"] = .string(session.tokenName)
        logger[metadataKey: "role"] = .string(session.role.rawValue)
        let response: Response
        if let area, !session.role.may(area) {
            response = console.renderer.page(
                "error", title: "Not for this role", area: nil, session: session,
                values: ["message": "The \(area.title) page is for finance; a \(session.role.rawValue) session cannot open it."],
                status: .forbidden)
        } else {
            do {
                response = try await page(session)
            } catch {
                if (error as? ConsoleError) == .csrfRefused {
                    logger.warning("console form refused: CSRF token missing or wrong", metadata: ["path": "\(request.uri.path)"])
                }
                response = failure(error, session: session, logger: logger)
            }
        }
        logger.info("console page", metadata: ["path": "\(request.uri.path)", "status": "\(response.status.code)"])
        return response.status.code >= 400 ? Self.closingUnread(response, for: request) : response
    }

    /// A refused POST (no session, a wrong CSRF token, too large) answers with `Connection:
    /// close`: its body is left unread, and closing is what stops the client sending the rest
    /// (else the server would read and discard up to the whole upload to keep the connection).
    static func closingUnread(_ response: Response, for request: Request) -> Response {
        guard request.method == .post else { return response }
        var response = response
        response.headers[.connection] = "close"
        return response
    }

    /// A POST of a signed-in user: `guarded`, then the form (read only once the session is
    /// known), whose CSRF token must be the session's. An `acting` form (one that asks Apple to
    /// change a purchase) is refused with 403 for a role that may not act, before it is read.
    func guardedForm<Form: ConsoleFormWithCSRF>(
        _ area: ConsoleArea?, _ request: Request, _ context: Context, form _: Form.Type, acting: Bool = false,
        page: (ConsoleSession, Form) async throws -> Response
    ) async -> Response {
        await guarded(area, request, context) { session in
            if acting, !session.role.mayAct { throw ConsoleError.actRefused }
            let form = try await ConsoleForm.decode(Form.self, from: request)
            guard let csrf = form.csrf, ConstantTime.equal(csrf.utf8, session.csrfToken.utf8) else { throw ConsoleError.csrfRefused }
            return try await page(session, form)
        }
    }

    func failure(_ error: any Error, session: ConsoleSession?, logger: Logger) -> Response {
        let mapped = LedgerServiceError.mapping(error)
        let (status, message): (HTTPResponse.Status, String)
        switch mapped {
        case let error as ConsoleError:
            return console.renderer.page("error", title: error.title, area: nil, session: session, values: ["message": error.message], status: error.status)
        case let error as LedgerServiceError where error.code == .invalidRequest: (status, message) = (.badRequest, error.message)
        case let error as LedgerServiceError where error.code == .notFound: (status, message) = (.notFound, error.message)
        case let error as LedgerServiceError where [.databaseUnavailable, .projectionsBehind, .busy, .appleUnavailable].contains(error.code):
            (status, message) = (.serviceUnavailable, error.message + ". Try again in a moment.")
        case let error as LedgerServiceError: (status, message) = (.badRequest, error.message)
        default:
            logger.error("console page failed", metadata: ["error_type": "\(type(of: error))"])
            (status, message) = (.internalServerError, "The console failed to show this page.")
        }
        return console.renderer.page("error", title: "Cannot show this page", area: nil, session: session, values: ["message": message], status: status)
    }

    private func signInPage(message: String?, status: HTTPResponse.Status, retryAfter: Int? = nil) -> Response {
        let token = ConsoleSessions.randomToken()
        var response = console.renderer.page(
            "sign-in", title: "Sign in", area: nil, session: nil, values: ["signInCsrf": token, "message": message as Any], status: status)
        response.setCookie(console.cookies.set(ConsoleCookies.signIn, token, maxAge: 3600))
        if let retryAfter { response.headers[.retryAfter] = String(retryAfter) }
        return response
    }

    /// 429 with `Retry-After`; the log names the client's address and what was limited.
    private func limited(_ refusal: SignInThrottle.Refusal, client: String, logger: Logger) -> Response {
        logger.warning("console sign-in limited", metadata: [
            "client": "\(client)", "limited": "\(refusal.limited)", "retry_after": "\(refusal.retryAfterSeconds)",
        ])
        let minutes = (refusal.retryAfterSeconds + 59) / 60
        return signInPage(
            message: "Too many wrong tokens. Try again in \(minutes) minute\(minutes == 1 ? "" : "s").", status: .tooManyRequests,
            retryAfter: refusal.retryAfterSeconds)
    }

    private func signIn(_ request: Request, _ context: Context) async -> Response {
        var logger = console.logger
        logger[metadataKey: "request_id"] = .string(context.requestID)
        let client = context.clientAddress ?? "unknown"
        // A client over its limit is refused before its form is read.
        if let refusal = console.throttle.check(address: client) { return limited(refusal, client: client, logger: logger) }
        let form: SignInForm
        do {
            form = try await ConsoleForm.decode(SignInForm.self, from: request)
        } catch {
            return signInPage(message: "The sign-in form could not be read.", status: .badRequest)
        }
        let token = form.token ?? ""
        if let refusal = console.throttle.check(address: client, token: token) { return limited(refusal, client: client, logger: logger) }
        guard let sent = form.csrf, let expected = ConsoleCookies.value(ConsoleCookies.signIn, in: request),
              ConstantTime.equal(sent.utf8, expected.utf8)
        else {
            logger.warning("console sign-in refused", metadata: ["reason": "csrf", "client": "\(client)"])
            return signInPage(message: "Sign in from the console's own page (the form's CSRF token did not match).", status: .forbidden)
        }
        guard let who = console.signIn(token) else {
            console.throttle.recordFailure(address: client, token: token)
            logger.warning("console sign-in refused", metadata: ["reason": "token", "client": "\(client)"])
            return signInPage(message: "That token is unknown, or its scope is not finance or support.", status: .unauthorized)
        }
        do {
            let (cookie, session) = try await console.sessions.create(tokenName: who.name, role: who.role)
            logger.info("console sign-in", metadata: ["token": "\(who.name)", "role": "\(who.role.rawValue)", "client": "\(client)"])
            return ConsoleRenderer.redirect(session.role.home, cookies: [
                console.cookies.set(ConsoleCookies.session, cookie, maxAge: ConsoleSessions.seconds(ConsoleSessions.lifetime)),
                console.cookies.clear(ConsoleCookies.signIn),
            ])
        } catch {
            return failure(error, session: nil, logger: logger)
        }
    }

    private func signOut(_ request: Request, _ context: Context) async -> Response {
        await guardedForm(nil, request, context, form: CSRFOnlyForm.self) { session, _ in
            if let cookie = ConsoleCookies.value(ConsoleCookies.session, in: request) {
                try await console.sessions.signOut(cookie: cookie)
            }
            console.logger.info("console sign-out", metadata: ["request_id": "\(context.requestID)", "token": "\(session.tokenName)"])
            return ConsoleRenderer.redirect("/console/sign-in", cookies: [console.cookies.clear(ConsoleCookies.session)])
        }
    }
}

extension Optional {
    func asyncFlatMap<U>(_ transform: (Wrapped) async throws -> U?) async rethrows -> U? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
