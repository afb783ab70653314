import AppStoreClient
import AppleSimulator
import Foundation
import Testing

/// The WebDriver client itself, on Debian's headless Chromium: what the console tests rely on.
@Suite("WebDriver client on a real headless Chromium", BrowserAvailability.required)
struct WebDriverSmokeTests {
    static let csv = "id,amount\n1,99\n"

    /// A folder of its own for a test, removed afterwards.
    private static func withFolder<T>(_ body: (URL) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webdriver-smoke-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try await body(folder)
    }

    /// index.html (a form with a text and a file field, a list, a hidden paragraph, a download
    /// link), done.html (shows what the form sent, from its query) and report.csv, in `site`.
    private static func writeSite(in site: URL) throws {
        try FileManager.default.createDirectory(at: site, withIntermediateDirectories: true)
        try """
            <!doctype html>
            <html><head><meta charset="utf-8"><title>Smoke page</title></head>
            <body>
            <h1 id="greeting">Hello, browser</h1>
            <ul><li>one</li><li>two</li></ul>
            <p id="hidden" style="display:none">not shown</p>
            <form id="send" action="done.html" method="get">
              <input id="name" name="name" type="text" value="prefilled">
              <input id="file" name="file" type="file">
              <button id="submit" type="submit">Send</button>
            </form>
            <a id="download" href="report.csv" download>Download</a>
            </body></html>
            """.write(to: site.appendingPathComponent("index.html"), atomically: true, encoding: .utf8)
        try """
            <!doctype html>
            <html><head><meta charset="utf-8"><title>Done</title></head>
            <body><p id="out"></p>
            <script>
            const query = new URLSearchParams(location.search);
            document.getElementById('out').textContent = 'name=' + query.get('name') + ' file=' + query.get('file');
            </script>
            </body></html>
            """.write(to: site.appendingPathComponent("done.html"), atomically: true, encoding: .utf8)
        try csv.write(to: site.appendingPathComponent("report.csv"), atomically: true, encoding: .utf8)
    }

    @Test("a form is typed into, given a file and sent; text, title, URL and source are read; a screenshot and a download are written")
    func pagesFormsScreenshotsAndDownloads() async throws {
        try await Self.withFolder { folder in
            let site = folder.appendingPathComponent("site")
            let downloads = folder.appendingPathComponent("downloads")
            try Self.writeSite(in: site)
            let index = site.appendingPathComponent("index.html").absoluteString  // file:///…/index.html
            let upload = site.appendingPathComponent("report.csv").path

            try await Browser.with(downloadDirectory: downloads.path) { browser in
                try await browser.go(index)
                #expect(try await browser.title() == "Smoke page")
                #expect(try await browser.currentURL() == index)
                #expect(try await browser.text("#greeting") == "Hello, browser")
                #expect(try await browser.texts("li") == ["one", "two"])
                #expect(try await browser.text("#hidden") == "")  // not displayed: no visible text
                #expect(try await browser.exists("form#send"))
                #expect(try await !browser.exists("#missing"))
                #expect(try await browser.attribute("#send", "method") == "get")
                #expect(try await browser.source().contains("id=\"greeting\""))

                // `type` replaces what the field held.
                #expect(try await browser.value("#name") == "prefilled")
                try await browser.type("#name", "Ada Lovelace")
                #expect(try await browser.value("#name") == "Ada Lovelace")
                try await browser.upload("#file", file: upload)
                let fileField = try await browser.elementReference("#file")
                #expect(try await browser.execute("return arguments[0].files[0].name", [fileField]) == .string("report.csv"))

                // A click on the submit button returns once the next page has loaded.
                try await browser.click("#submit")
                #expect(try await browser.title() == "Done")
                #expect(try await browser.text("#out") == "name=Ada Lovelace file=report.csv")

                try await browser.back()
                #expect(try await browser.title() == "Smoke page")
                // Afresh (history would restore the chosen file), sent without its button.
                try await browser.go(index)
                try await browser.type("#name", "Grace Hopper")
                try await browser.submit("#name")  // the field's form
                #expect(try await browser.text("#out") == "name=Grace Hopper file=")

                let missing = await #expect(throws: WebDriverError.self) { try await browser.click("#missing") }
                #expect(missing?.code == "no such element")
                #expect(missing?.command.contains("#missing") == true)

                let shot = folder.appendingPathComponent("shots/done.png").path
                try await browser.screenshot(to: shot)
                let png = try Data(contentsOf: URL(fileURLWithPath: shot))
                #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
                #expect(png.count > 1_000)

                try await browser.go(index)
                try await browser.click("#download")
                let downloaded = try await browser.waitForDownload(suffix: ".csv", within: .seconds(30))
                #expect(URL(fileURLWithPath: downloaded).lastPathComponent == "report.csv")
                #expect(try String(contentsOfFile: downloaded, encoding: .utf8) == Self.csv)
            }
        }
    }

    @Test("cookies of an HTTP origin are listed with their flags, added, read by name and deleted; quit ends chromedriver and removes its files")
    func cookiesAndQuit() async throws {
        try await Self.withFolder { folder in
            // Any real HTTP origin will do: the Apple simulator's, which needs no database.
            let apple = try await AppleSimulatorServer(simulator: try AppleSimulator(configuration: AppleSimulator.Configuration(machineClock: .system))).start()
            let browser: Browser
            do {
                browser = try await Browser.start(downloadDirectory: folder.appendingPathComponent("downloads").path)
            } catch {
                try? await apple.stop()
                throw error
            }
            let result: Result<Void, any Error>
            do {
                try await browser.go(apple.baseURL + "/control/clock")
                #expect(try await browser.cookies().isEmpty)
                try await browser.addCookie(BrowserCookie(name: "session", value: "s1", httpOnly: true, sameSite: "Strict"))
                try await browser.addCookie(BrowserCookie(name: "theme", value: "dark"))

                let session = try await browser.cookie(named: "session")
                #expect(session?.value == "s1")
                #expect(session?.httpOnly == true)
                #expect(session?.secure == false)
                #expect(session?.sameSite == "Strict")
                #expect(session?.path == "/")
                #expect(Set(try await browser.cookies().map(\.name)) == ["session", "theme"])
                // Scripts see the ordinary cookie only.
                #expect(try await browser.execute("return document.cookie") == .string("theme=dark"))

                try await browser.deleteCookie("theme")
                #expect(try await browser.cookie(named: "theme") == nil)
                try await browser.deleteAllCookies()
                #expect(try await browser.cookies().isEmpty)
                result = .success(())
            } catch {
                result = .failure(error)
            }
            await browser.quit()
            try? await apple.stop()
            try result.get()

            #expect(browser.driver.exitStatus != nil)
            #expect(!FileManager.default.fileExists(atPath: browser.driver.folder.path))
            await browser.quit()  // again: nothing to do
            let afterQuit = await #expect(throws: WebDriverError.self) { try await browser.title() }
            #expect(afterQuit?.code == "no answer")
        }
    }
}
