import Foundation
import Testing

/// Whether the browser tests can run: Debian's Chromium and its chromedriver (`chromium` and
/// `chromium-driver`, which `Tools/test` installs). Nothing is downloaded at run time.
///
/// The rule is PostgreSQL's (README.md, "Under `CI=true` ... none is skipped"): under CI a missing
/// browser is a test failure with the reason, never a skip. Run by hand without them, the
/// browser tests are disabled with the same reason instead: mark their suite
/// `@Suite(..., BrowserAvailability.required)`; `Browser.start` then throws
/// ``BrowserUnavailable`` if they run without a browser (that is, under CI).
enum BrowserAvailability {
    /// Debian's launcher of Chromium (a script that execs /usr/lib/chromium/chromium).
    static let chromium = "/usr/bin/chromium"
    static let chromedriver = "/usr/bin/chromedriver"

    /// The executables that are missing (empty when both are there).
    static var missing: [String] {
        [chromium, chromedriver].filter { !FileManager.default.isExecutableFile(atPath: $0) }
    }

    static var isInstalled: Bool { missing.isEmpty }

    /// `CI` set to anything but empty, `0` or `false` (GitHub Actions, GitLab and most CI set `CI=true`).
    static var underCI: Bool {
        guard let value = ProcessInfo.processInfo.environment["CI"]?.lowercased() else { return false }
        return !["", "0", "false", "no"].contains(value)
    }

    /// Why the browser tests cannot run, or nil when they can.
    static var problem: String? {
        let missing = missing
        guard !missing.isEmpty else { return nil }
        return "the browser tests need Debian's Chromium and chromedriver; missing: \(missing.joined(separator: ", ")). "
            + "Run Tools/test (it installs them) or `apt-get install -y --no-upgrade --no-install-recommends chromium chromium-driver`"
    }

    /// The trait for browser suites and tests: disabled (with the reason) when the browser is
    /// missing outside CI; enabled under CI, so the missing browser fails the test.
    static var required: ConditionTrait {
        let reason = problem.map { $0 + " (under CI=true this is a failure, not a skip)" } ?? "Chromium and chromedriver are installed"
        return .enabled(if: isInstalled || underCI, Comment(rawValue: reason))
    }

    /// Throws ``BrowserUnavailable`` when the browser is missing.
    static func check() throws {
        if let problem { throw BrowserUnavailable(description: underCI ? "under CI: " + problem : problem) }
    }
}

/// Thrown by `Browser.start` when Chromium or chromedriver is not installed.
struct BrowserUnavailable: Error, CustomStringConvertible {
    var description: String
}
