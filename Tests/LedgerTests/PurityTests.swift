import Foundation
import Testing

@testable import AppStore
@testable import Ledger

/// `Ledger` and the `AppStore` and `Primitives` modules it depends on read neither the clock nor files nor the
/// environment: time comes in as an argument or a `WallClock`, files as bytes. No import can hold
/// this (Foundation's narrowest part still has `Date()` and `FileManager`), so the sources are read.
@Suite("The domain is pure: no clock, file or environment readings in Ledger, AppStore or Primitives")
struct PurityTests {
    /// What reads the machine: its clock, its files, its environment.
    static let readings = [
        "Date()", "Date.now", "timeIntervalSinceNow", "CFAbsoluteTimeGetCurrent", "DispatchTime.now", "gettimeofday", "clock_gettime",
        "time(nil)", "ContinuousClock", "SuspendingClock", "FileManager", "FileHandle", "contentsOf:", "contentsOfFile", "fopen(",
        "ProcessInfo", "getenv(",
    ]

    /// The repository's `Sources/<module>`, found from this file's path.
    static func sources(of module: String) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources").appendingPathComponent(module)
    }

    @Test("no source line of the module reads the machine", arguments: ["Ledger", "AppStore", "Primitives"])
    func noReadings(module: String) throws {
        let directory = Self.sources(of: module)
        let files = try #require(FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        #expect(!files.isEmpty, "no sources under \(directory.path)")
        for file in files {
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            for (index, line) in lines.enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                if code.hasPrefix("//") { continue }
                for reading in Self.readings where code.contains(reading) {
                    Issue.record("\(module)/\(file.lastPathComponent):\(index + 1) reads the machine (\(reading)): \(code)")
                }
            }
        }
    }

    @Test("report fields are trimmed of exactly Foundation's whitespace, without Foundation")
    func trimmingMatchesFoundation() {
        let fields = [
            "", " ", "\t", " a ", "\u{00A0}a\u{3000}", "\u{2003} b c \u{202F}", "a\u{200B}", "\u{FEFF}a", "\u{1680}é ", " ¥1,00 ",
        ]
        for field in fields {
            #expect(ReportRow.trimmingSpaces(Substring(field)) == field.trimmingCharacters(in: .whitespaces), "\(field.unicodeScalars.map { $0.value })")
        }
    }
}
