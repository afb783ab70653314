import Foundation
import HTTPTypes
import Hummingbird
import LedgerService
import Logging
import NIOCore

/// The console's routes under `/console/`. Every page but sign-in needs a session; every POST
/// that changes something needs the session's CSRF token; every page view is logged with the
/// request id and the token's name.
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
        router.get("console/sign-in") { request, context in signInPage(request, context, message: nil, status: .ok) }
        router.post("console/sign-in") { request, context in await signIn(request, context) }
        router.post("console/sign-out") { request, context in await signOut(request, context) }
        RevenuePage(console: console).register(on: router, routes: self)
        SubscriptionsPage(console: console).register(on: router, routes: self)
        LookupPage(console: console).register(on: router, routes: self)
        ReconciliationPage(console: console).register(on: router, routes: self)
    }

    /// Runs a page for a signed-in user allowed in `area`: sign-in first when there is no
    /// session, 403 for a role without the area, errors as pages. Logs the view.
    func guarded(
        _ area: ConsoleArea?, _ request: Request, _ context: Context, page: (ConsoleSession) async throws -> Response
    ) async -> Response {
        var logger = console.logger
        logger[metadataKey: "request_id"] = .string(context.requestID)
        let session: ConsoleSession?
        do {
            session = try await ConsoleCookies.value(ConsoleCookies.session, in: request.headers).asyncFlatMap { try await console.sessions.find(cookie: $0) }
        } catch {
            return failure(error, session: nil, logger: logger)
        }
        guard let session else {
            logger.info("console page", metadata: ["path": "\(request.uri.path)", "token": "none", "status": "303"])
            return ConsoleRenderer.redirect("/console/sign-in")
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
                response = failure(error, session: session, logger: logger)
            }
        }
        logger.info("console page", metadata: ["path": "\(request.uri.path)", "status": "\(response.status.code)"])
        return response
    }

    /// A POST of a signed-in user: `guarded`, plus the form's CSRF token must be the session's.
    func guardedForm(
        _ area: ConsoleArea?, _ request: Request, _ context: Context, csrf: String?, page: (ConsoleSession) async throws -> Response
    ) async -> Response {
        await guarded(area, request, context) { session in
            guard let csrf, ConsoleSessions.same(csrf, session.csrfToken) else {
                console.logger.warning("console form refused: CSRF token missing or wrong", metadata: [
                    "request_id": "\(context.requestID)", "token": "\(session.tokenName)", "path": "\(request.uri.path)",
                    "csrf_sent": "\(csrf == nil ? "no" : "\(csrf!.count) characters")",
                ])
                return console.renderer.page(
                    "error", title: "Form refused", area: nil, session: session,
                    values: ["message": "This form was not sent from the console's own page (its CSRF token is missing or wrong). Nothing was changed."],
                    status: .forbidden)
            }
            return try await page(session)
        }
    }

    func failure(_ error: any Error, session: ConsoleSession?, logger: Logger) -> Response {
        let mapped = LedgerServiceError.mapping(error)
        let (status, message): (HTTPResponse.Status, String)
        switch mapped {
        case let error as ConsoleError: (status, message) = (error.status, error.message)
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

    private func signInPage(_ request: Request, _ context: Context, message: String?, status: HTTPResponse.Status) -> Response {
        let token = ConsoleSessions.randomToken()
        var response = console.renderer.page(
            "sign-in", title: "Sign in", area: nil, session: nil, values: ["signInCsrf": token, "message": message as Any], status: status)
        response.headers.append(HTTPField(name: .setCookie, value: console.cookies.set(ConsoleCookies.signIn, token, maxAge: 3600)))
        return response
    }

    private func signIn(_ request: Request, _ context: Context) async -> Response {
        var logger = console.logger
        logger[metadataKey: "request_id"] = .string(context.requestID)
        let form: ConsoleForm
        do {
            form = ConsoleForm(urlEncoded: String(buffer: try await request.body.collect(upTo: 16 * 1024)))
        } catch {
            return signInPage(request, context, message: "The sign-in form was too large.", status: .badRequest)
        }
        guard let sent = form["csrf"], let expected = ConsoleCookies.value(ConsoleCookies.signIn, in: request.headers),
              ConsoleSessions.same(sent, expected)
        else {
            logger.warning("console sign-in refused", metadata: ["reason": "csrf"])
            return signInPage(request, context, message: "Sign in from the console's own page (the form's CSRF token did not match).", status: .forbidden)
        }
        guard let token = form["token"], let who = console.signIn(token) else {
            logger.warning("console sign-in refused", metadata: ["reason": "token"])
            return signInPage(request, context, message: "That token is unknown, or its scope is not finance or support.", status: .unauthorized)
        }
        do {
            let (cookie, session) = try await console.sessions.create(tokenName: who.name, role: who.role)
            logger.info("console sign-in", metadata: ["token": "\(who.name)", "role": "\(who.role.rawValue)"])
            return ConsoleRenderer.redirect(session.role.home, cookies: [
                console.cookies.set(ConsoleCookies.session, cookie, maxAge: Int(ConsoleSessions.lifetime.components.seconds)),
                console.cookies.clear(ConsoleCookies.signIn),
            ])
        } catch {
            return failure(error, session: nil, logger: logger)
        }
    }

    private func signOut(_ request: Request, _ context: Context) async -> Response {
        let form = ConsoleForm(urlEncoded: (try? await request.body.collect(upTo: 16 * 1024)).map { String(buffer: $0) } ?? "")
        return await guardedForm(nil, request, context, csrf: form["csrf"]) { session in
            if let cookie = ConsoleCookies.value(ConsoleCookies.session, in: request.headers) {
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
