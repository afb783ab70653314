import AsyncHTTPClient
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOHTTP1
import Synchronization

/// A WebDriver command that failed: the W3C error code and message chromedriver answered
/// (`no such element`, `element not interactable`, `timeout`, ...), or `no answer` when
/// chromedriver did not answer in time, or `bad answer` when its answer was not WebDriver JSON.
struct WebDriverError: Error, CustomStringConvertible {
    var code: String
    var message: String
    /// What was asked, e.g. `click("#send"): POST /session/…/element/…/click`.
    var command: String
    /// The HTTP status of chromedriver's answer (nil without an answer).
    var httpStatus: Int?

    var description: String {
        "WebDriver \(command) failed: \(code)\(httpStatus.map { " (HTTP \($0))" } ?? ""): \(message)"
    }
}

/// One W3C WebDriver HTTP exchange with chromedriver.
enum WebDriverTransport {
    /// A client of its own: a refused connection (chromedriver gone) fails at once instead of
    /// being tried again until the time-out, as `HTTPClient.shared` would. Never shut down:
    /// it lives as long as the test process.
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(5)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    /// Sends the command and returns its answer's `value`; throws ``WebDriverError`` for an
    /// error answer, no answer within `timeout`, or an answer that is not WebDriver JSON.
    /// A POST always carries a JSON object (`{}` when `body` is nil), as the protocol requires.
    static func send(
        _ method: HTTPMethod, _ url: String, body: WebDriverJSON? = nil, timeout: Duration, command: String? = nil
    ) async throws -> WebDriverJSON {
        let command = command.map { "\($0): \(method.rawValue) \(url)" } ?? "\(method.rawValue) \(url)"
        var request = HTTPClientRequest(url: url)
        request.method = method
        if method == .POST {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .withoutEscapingSlashes
            request.headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
            request.body = .bytes(ByteBuffer(bytes: try encoder.encode(body ?? .object([:]))))
        }
        let status: Int
        let bytes: ByteBuffer
        do {
            let response = try await client.execute(request, timeout: timeAmount(timeout))
            status = Int(response.status.code)
            bytes = try await response.body.collect(upTo: 256 << 20)  // a page source or screenshot can be large
        } catch {
            throw WebDriverError(code: "no answer", message: "\(error) (time-out \(timeout))", command: command)
        }
        guard let answer = try? JSONDecoder().decode(WebDriverJSON.self, from: Data(bytes.readableBytesView)), let value = answer["value"] else {
            throw WebDriverError(
                code: "bad answer", message: String(String(buffer: bytes).prefix(2_000)), command: command, httpStatus: status)
        }
        // An error is a non-2xx answer (a script may well return an object with an "error" key).
        // Its stack trace is only addresses in Debian's build: left out.
        guard (200..<300).contains(status) else {
            throw WebDriverError(
                code: value["error"]?.string ?? "bad answer", message: value["message"]?.string ?? value.text, command: command, httpStatus: status)
        }
        return value
    }

    static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds * 1_000 + attoseconds / 1_000_000_000_000_000)
    }
}

/// A cookie as WebDriver shows it.
///
/// Chromium reports `sameSite: "Lax"` for a cookie set without a SameSite attribute (its
/// default), so this cannot tell an explicit `SameSite=Lax` from none: check the `Set-Cookie`
/// header itself for that. Chromium also keeps `Secure` cookies over http://127.0.0.1.
struct BrowserCookie: Sendable, Equatable {
    var name: String
    var value: String
    var path: String? = "/"
    var domain: String? = nil
    var httpOnly: Bool = false
    var secure: Bool = false
    /// "Strict", "Lax" or "None".
    var sameSite: String? = nil
    /// Seconds since 1970; nil for a session cookie.
    var expiry: Int? = nil

    init(
        name: String, value: String, path: String? = "/", domain: String? = nil, httpOnly: Bool = false, secure: Bool = false,
        sameSite: String? = nil, expiry: Int? = nil
    ) {
        self.name = name
        self.value = value
        self.path = path
        self.domain = domain
        self.httpOnly = httpOnly
        self.secure = secure
        self.sameSite = sameSite
        self.expiry = expiry
    }

    init?(_ json: WebDriverJSON) {
        guard let name = json["name"]?.string, let value = json["value"]?.string else { return nil }
        self.init(
            name: name, value: value, path: json["path"]?.string, domain: json["domain"]?.string,
            httpOnly: json["httpOnly"]?.bool ?? false, secure: json["secure"]?.bool ?? false,
            sameSite: json["sameSite"]?.string, expiry: json["expiry"]?.int)
    }

    var json: WebDriverJSON {
        var object: [String: WebDriverJSON] = [
            "name": .string(name), "value": .string(value), "httpOnly": .bool(httpOnly), "secure": .bool(secure),
        ]
        if let path { object["path"] = .string(path) }
        if let domain { object["domain"] = .string(domain) }
        if let sameSite { object["sameSite"] = .string(sameSite) }
        if let expiry { object["expiry"] = .number(Double(expiry)) }
        return .object(object)
    }
}

/// A real headless Chromium (Debian's), driven over W3C WebDriver by its own chromedriver.
///
/// Start one per test (`Browser.with` quits it on every path); each has its own chromedriver,
/// profile and temporary files, so tests run in parallel without sharing cookies. Elements are
/// found by CSS selector, afresh for every call (server-rendered pages change under a
/// reference after every navigation). Navigation, clicks and form submissions return once the
/// next page has loaded (chromedriver waits for pending navigations, `pageLoad` time-out).
final class Browser: Sendable {
    /// The W3C web element identifier's key.
    static let elementKey = "element-6066-11e4-a52e-4f735466cecf"

    let driver: ChromeDriverProcess
    let sessionID: String
    /// Where downloads land (absolute); `waitForDownload` looks there.
    let downloadDirectory: String
    let commandTimeout: Duration
    let pageLoadTimeout: Duration
    /// Chromium's main process (`goog:processID`), ended by `quit()` if the session cannot be deleted.
    private let browserPID: Int32?
    private let quitted = Mutex(false)

    private init(
        driver: ChromeDriverProcess, sessionID: String, downloadDirectory: String, commandTimeout: Duration, pageLoadTimeout: Duration,
        browserPID: Int32?
    ) {
        self.driver = driver
        self.sessionID = sessionID
        self.downloadDirectory = downloadDirectory
        self.commandTimeout = commandTimeout
        self.pageLoadTimeout = pageLoadTimeout
        self.browserPID = browserPID
    }

    // MARK: Starting and quitting

    /// Starts chromedriver and a headless Chromium session whose downloads go to
    /// `downloadDirectory` (absolute; created if missing) without asking. Throws
    /// ``BrowserUnavailable`` when Chromium or chromedriver is not installed.
    ///
    /// Downloads: the `download.*` preferences work in `--headless=new` (checked with Chromium
    /// 156, both for `<a download>` and for `Content-Disposition: attachment`); a second
    /// download from one page needs `automatic_downloads` allowed, else Chromium drops it.
    /// `--no-sandbox`: the tests run as root, where Chromium's sandbox refuses to start.
    static func start(
        downloadDirectory: String, pageLoadTimeout: Duration = .seconds(30), commandTimeout: Duration = .seconds(30), attempts: Int = 2
    ) async throws -> Browser {
        try BrowserAvailability.check()
        guard downloadDirectory.hasPrefix("/") else {
            throw BrowserStartFailure(description: "the download directory must be an absolute path: \(downloadDirectory)")
        }
        let downloads = URL(fileURLWithPath: downloadDirectory).standardizedFileURL.path
        try FileManager.default.createDirectory(atPath: downloads, withIntermediateDirectories: true)
        // Typed one level at a time: one nested literal of this size is slow to type-check.
        let arguments: [WebDriverJSON] = [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1000",
        ]
        let preferences: [String: WebDriverJSON] = [
            "download.default_directory": .string(downloads),
            "download.prompt_for_download": .bool(false),
            "download.directory_upgrade": .bool(true),
            "profile.default_content_setting_values.automatic_downloads": .number(1),
        ]
        let chromeOptions: [String: WebDriverJSON] = [
            "binary": .string(BrowserAvailability.chromium), "args": .array(arguments), "prefs": .object(preferences),
        ]
        let timeouts: [String: WebDriverJSON] = [
            "pageLoad": .number(Double(WebDriverTransport.milliseconds(pageLoadTimeout))), "script": .number(10_000), "implicit": .number(0),
        ]
        let alwaysMatch: [String: WebDriverJSON] = [
            "browserName": .string("chrome"), "pageLoadStrategy": .string("normal"),
            "unhandledPromptBehavior": .string("dismiss and notify"), "timeouts": .object(timeouts),
            "goog:chromeOptions": .object(chromeOptions),
        ]
        let capabilities = WebDriverJSON.object(["capabilities": .object(["alwaysMatch": .object(alwaysMatch)])])
        var failures: [String] = []
        for _ in 0..<max(attempts, 1) {
            let driver = try await ChromeDriverProcess.start()
            do {
                // Chromium's first start on a loaded machine can take a while.
                let value = try await WebDriverTransport.send(
                    .POST, driver.baseURL + "/session", body: capabilities, timeout: .seconds(90), command: "new session")
                guard let id = value["sessionId"]?.string else {
                    throw WebDriverError(code: "bad answer", message: "no sessionId in \(value.text)", command: "new session")
                }
                let pid = (value["capabilities"]?["goog:processID"]?.int).map { Int32($0) }
                return Browser(
                    driver: driver, sessionID: id, downloadDirectory: downloads, commandTimeout: commandTimeout,
                    pageLoadTimeout: pageLoadTimeout, browserPID: pid)
            } catch {
                failures.append("\(error)\nchromedriver output:\n\(driver.outputTail())")
                // Said, not swallowed: a session that needed a second browser is worth seeing in the log.
                let next = failures.count < max(attempts, 1) ? "trying again with a new chromedriver" : "giving up"
                FileHandle.standardError.write(Data("Chromium session, attempt \(failures.count) of \(max(attempts, 1)), failed (\(next)): \(error)\n".utf8))
                await driver.terminate()
            }
        }
        throw BrowserStartFailure(description: "no Chromium session (\(failures.count) attempts):\n" + failures.joined(separator: "\n---\n"))
    }

    /// Runs `body` with a started browser and quits it afterwards, whether `body` throws or not.
    static func with<T>(
        downloadDirectory: String, pageLoadTimeout: Duration = .seconds(30), _ body: (Browser) async throws -> T
    ) async throws -> T {
        let browser = try await start(downloadDirectory: downloadDirectory, pageLoadTimeout: pageLoadTimeout)
        let result: Result<T, any Error>
        do {
            result = .success(try await body(browser))
        } catch {
            result = .failure(error)
        }
        await browser.quit()
        return try result.get()
    }

    /// Deletes the session (Chromium exits), ends Chromium itself if that failed, terminates
    /// chromedriver and removes its temporary files. Never throws; later calls do nothing.
    func quit() async {
        let first = quitted.withLock { done -> Bool in
            if done { return false }
            done = true
            return true
        }
        guard first else { return }
        var deleted = false
        if driver.exitStatus == nil {
            deleted = (try? await WebDriverTransport.send(.DELETE, sessionURL, timeout: .seconds(20), command: "quit")) != nil
        }
        if !deleted, let browserPID, Self.isChromium(browserPID) {
            // Chromium outlives a chromedriver that is killed; its helpers end with it.
            _ = kill(browserPID, SIGTERM)
            let deadline = ContinuousClock.now + .seconds(5)
            while Self.isChromium(browserPID), ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(50))
            }
            if Self.isChromium(browserPID) { _ = kill(browserPID, SIGKILL) }
        }
        await driver.terminate()
    }

    /// Whether `pid` is a live Chromium (not ended, not a zombie, not a reused pid).
    private static func isChromium(_ pid: Int32) -> Bool {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"), !data.isEmpty else { return false }
        return String(decoding: data, as: UTF8.self).contains("chromium")
    }

    // MARK: Pages

    /// Opens `url` and returns once it has loaded (or started a download).
    func go(_ url: String) async throws {
        _ = try await command(.POST, "/url", ["url": .string(url)], "go(\(url))", timeout: pageLoadTimeout + .seconds(15))
    }

    func currentURL() async throws -> String {
        try await command(.GET, "/url", nil, "currentURL()").string ?? ""
    }

    func title() async throws -> String {
        try await command(.GET, "/title", nil, "title()").string ?? ""
    }

    /// The page's HTML as the browser has it now (after scripts, if any).
    func source() async throws -> String {
        try await command(.GET, "/source", nil, "source()").string ?? ""
    }

    func back() async throws {
        _ = try await command(.POST, "/back", nil, "back()", timeout: pageLoadTimeout + .seconds(15))
    }

    func refresh() async throws {
        _ = try await command(.POST, "/refresh", nil, "refresh()", timeout: pageLoadTimeout + .seconds(15))
    }

    // MARK: Elements

    /// The visible text of the first element matching `css` ("" when it is hidden);
    /// `no such element` when none matches.
    func text(_ css: String) async throws -> String {
        let id = try await element(css)
        return try await command(.GET, "/element/\(id)/text", nil, "text(\(quoted(css)))").string ?? ""
    }

    /// The visible texts of every element matching `css`, in document order (e.g. table cells).
    func texts(_ css: String) async throws -> [String] {
        var texts: [String] = []
        for id in try await elements(css) {
            texts.append(try await command(.GET, "/element/\(id)/text", nil, "texts(\(quoted(css)))").string ?? "")
        }
        return texts
    }

    func exists(_ css: String) async throws -> Bool {
        try await !elements(css).isEmpty
    }

    func count(_ css: String) async throws -> Int {
        try await elements(css).count
    }

    /// The attribute as written in the HTML (nil when absent).
    func attribute(_ css: String, _ name: String) async throws -> String? {
        let id = try await element(css)
        return try await command(.GET, "/element/\(id)/attribute/\(escaped(name))", nil, "attribute(\(quoted(css)), \(name))").string
    }

    /// The DOM property (e.g. `value`, `checked`, `disabled`).
    func property(_ css: String, _ name: String) async throws -> WebDriverJSON {
        let id = try await element(css)
        return try await command(.GET, "/element/\(id)/property/\(escaped(name))", nil, "property(\(quoted(css)), \(name))")
    }

    /// A field's current value.
    func value(_ css: String) async throws -> String {
        try await property(css, "value").string ?? ""
    }

    /// Replaces the value of the field matching `css` with `text`, typed as keys.
    func type(_ css: String, _ text: String) async throws {
        let id = try await element(css)
        _ = try await command(.POST, "/element/\(id)/clear", nil, "type(\(quoted(css))): clear")
        _ = try await command(.POST, "/element/\(id)/value", ["text": .string(text)], "type(\(quoted(css)))")
    }

    /// Clicks the first element matching `css` (scrolled into view; `element not interactable`
    /// when hidden, `element click intercepted` when covered); waits for a navigation it starts.
    func click(_ css: String) async throws {
        let id = try await element(css)
        _ = try await command(.POST, "/element/\(id)/click", nil, "click(\(quoted(css)))", timeout: pageLoadTimeout + .seconds(15))
    }

    /// Submits the form matching `css` (or the form of the field matching it) as its submit
    /// button would: validation and submit handlers run (`requestSubmit`). Clicking the button
    /// is the closer imitation of a person; this is for forms without one.
    func submit(_ css: String) async throws {
        let form = try await elementReference(css)
        _ = try await command(
            .POST, "/execute/sync", ["script": "(arguments[0].form || arguments[0]).requestSubmit()", "args": [form]],
            "submit(\(quoted(css)))", timeout: pageLoadTimeout + .seconds(15))
        // Wait for the navigation the submission started (chromedriver waits before answering).
        _ = try await currentURL()
    }

    /// Chooses `path` (absolute, existing) in the `<input type=file>` matching `css`.
    func upload(_ css: String, file path: String) async throws {
        guard path.hasPrefix("/"), FileManager.default.fileExists(atPath: path) else {
            throw WebDriverError(code: "invalid argument", message: "no file at \(path) (an absolute path is needed)", command: "upload(\(quoted(css)))")
        }
        let id = try await element(css)
        _ = try await command(.POST, "/element/\(id)/value", ["text": .string(path)], "upload(\(quoted(css)), \(path))")
    }

    /// Runs `script` (a function body; `arguments[i]` are `arguments`, `return` answers) in the page.
    func execute(_ script: String, _ arguments: [WebDriverJSON] = []) async throws -> WebDriverJSON {
        try await command(.POST, "/execute/sync", ["script": .string(script), "args": .array(arguments)], "execute(…)")
    }

    /// The first element matching `css`, to pass to `execute` as an argument.
    func elementReference(_ css: String) async throws -> WebDriverJSON {
        let id = try await element(css)
        return .object([Self.elementKey: .string(id)])
    }

    /// Waits until an element matches `css` (for pages a script changes after loading).
    func waitFor(_ css: String, within limit: Duration = .seconds(10)) async throws {
        let deadline = ContinuousClock.now + limit
        while try await !exists(css) {
            guard ContinuousClock.now < deadline else {
                let url = (try? await currentURL()) ?? "?"
                throw WebDriverError(code: "timeout", message: "no element matched within \(limit) on \(url)", command: "waitFor(\(quoted(css)))")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    // MARK: Cookies (of the current page's origin)

    func cookies() async throws -> [BrowserCookie] {
        let all = try await command(.GET, "/cookie", nil, "cookies()")
        return (all.array ?? []).compactMap { BrowserCookie($0) }
    }

    /// The cookie named `name`, or nil.
    func cookie(named name: String) async throws -> BrowserCookie? {
        do {
            let json = try await command(.GET, "/cookie/\(escaped(name))", nil, "cookie(named: \(name))")
            return BrowserCookie(json)
        } catch let error as WebDriverError where error.code == "no such cookie" {
            return nil
        }
    }

    /// Adds a cookie for the current page's domain (a page of it must be open).
    func addCookie(_ cookie: BrowserCookie) async throws {
        _ = try await command(.POST, "/cookie", ["cookie": cookie.json], "addCookie(\(cookie.name))")
    }

    func deleteCookie(_ name: String) async throws {
        _ = try await command(.DELETE, "/cookie/\(escaped(name))", nil, "deleteCookie(\(name))")
    }

    func deleteAllCookies() async throws {
        _ = try await command(.DELETE, "/cookie", nil, "deleteAllCookies()")
    }

    // MARK: Screenshots and downloads

    /// Writes a PNG of the viewport to `path` (its folder is created if missing).
    func screenshot(to path: String) async throws {
        let base64 = try await command(.GET, "/screenshot", nil, "screenshot()").string ?? ""
        guard let png = Data(base64Encoded: base64) else {
            throw WebDriverError(code: "bad answer", message: "the screenshot is not base64 (\(base64.prefix(40))…)", command: "screenshot()")
        }
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try png.write(to: url, options: .atomic)
    }

    /// The path of the first finished download in `directory` whose name ends with `suffix`,
    /// once there is one. Chromium writes `….crdownload` and renames it when complete, so a
    /// name without that ending is a whole file. A second download of the same name becomes
    /// `name (1).ext`: give each browser a fresh directory.
    func waitForFile(in directory: String, suffix: String, deadline limit: Duration = .seconds(30)) async throws -> String {
        let deadline = ContinuousClock.now + limit
        while true {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            let finished = names.filter { !$0.hasSuffix(".crdownload") && !$0.hasPrefix(".") && $0.hasSuffix(suffix) }
            if let name = finished.sorted().first {
                return URL(fileURLWithPath: directory).appendingPathComponent(name).path
            }
            guard ContinuousClock.now < deadline else {
                throw WebDriverError(
                    code: "timeout", message: "no finished download ending with \"\(suffix)\" in \(directory) within \(limit); it holds \(names.sorted())",
                    command: "waitForFile")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// `waitForFile` in this browser's download directory.
    func waitForDownload(suffix: String, within limit: Duration = .seconds(30)) async throws -> String {
        try await waitForFile(in: downloadDirectory, suffix: suffix, deadline: limit)
    }

    // MARK: The protocol

    private var sessionURL: String { driver.baseURL + "/session/" + sessionID }

    private func command(
        _ method: HTTPMethod, _ path: String, _ body: WebDriverJSON?, _ what: String, timeout: Duration? = nil
    ) async throws -> WebDriverJSON {
        try await WebDriverTransport.send(method, sessionURL + path, body: body, timeout: timeout ?? commandTimeout, command: what)
    }

    private func elements(_ css: String) async throws -> [String] {
        let found = try await command(.POST, "/elements", ["using": "css selector", "value": .string(css)], "find all \(quoted(css))")
        return (found.array ?? []).compactMap { $0[Self.elementKey]?.string }
    }

    private func element(_ css: String) async throws -> String {
        let found = try await command(.POST, "/element", ["using": "css selector", "value": .string(css)], "find \(quoted(css))")
        guard let id = found[Self.elementKey]?.string else {
            throw WebDriverError(code: "bad answer", message: "no element reference in \(found.text)", command: "find \(quoted(css))")
        }
        return id
    }

    private func quoted(_ css: String) -> String { "\"\(css)\"" }

    private func escaped(_ component: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#%")
        return component.addingPercentEncoding(withAllowedCharacters: allowed) ?? component
    }
}

struct BrowserStartFailure: Error, CustomStringConvertible {
    var description: String
}
