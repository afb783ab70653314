/// Wall time is read in one place, `WallClock.system` (docs/design-notes.md, "One clock"):
/// everything else is handed a `WallClock`, and an executable's entry point hands it
/// `.system`. Monotonic timing (`ContinuousClock`, `DispatchTime`) measures durations and is
/// not a reading of what time it is, so it is allowed anywhere.
enum OneClockRule {
    /// The clock's own file: the one place the machine's wall clock is read.
    static let clockFile = "Sources/AppStoreClient/WallClock+System.swift"

    /// What reads the wall clock, by name. (Computed: a `Regex` is not Sendable, so it cannot be
    /// a stored static.)
    static var readings: [(name: String, pattern: Regex<Substring>)] {
        [
            ("Date()", #/\bDate\s*\(\s*\)/#),
            ("Date.init()", #/\bDate\.init\s*\(\s*\)/#),
            ("Date.now", #/\bDate\.now\b/#),
            ("Date(timeIntervalSinceNow:)", #/\bDate\s*\(\s*timeIntervalSinceNow\s*:/#),
            (".timeIntervalSinceNow", #/\.timeIntervalSinceNow\b/#),
            ("Date.timeIntervalSinceReferenceDate", #/\bDate\.timeIntervalSinceReferenceDate\b/#),
            ("time(nil)", #/\btime\s*\(\s*nil\s*\)/#),
            ("gettimeofday", #/\bgettimeofday\s*\(/#),
            ("clock_gettime(CLOCK_REALTIME)", #/\bclock_gettime\s*\(\s*CLOCK_REALTIME/#),
            ("CFAbsoluteTimeGetCurrent", #/\bCFAbsoluteTimeGetCurrent\b/#),
            ("DispatchWallTime.now", #/\bDispatchWallTime\.now\b/#),
        ]
    }

    /// Readings allowed outside the clock's file, each by file and name, with why.
    static let exceptions: [(file: String, reading: String, why: String)] = [
        (
            "Sources/EventStore/GroupCommitter.swift", "Date(timeIntervalSinceNow:)",
            "NSCondition waits only until a Date: the group commit's few milliseconds of pacing, never a time recorded or decided by"
        ),
    ]

    static func findings(in repository: Repository) -> [Finding] {
        let readings = Self.readings
        return repository.productionFiles.filter { $0.path != clockFile }.flatMap { file in
            readings.flatMap { reading -> [Finding] in
                if exceptions.contains(where: { $0.file == file.path && $0.reading == reading.name }) { return [] }
                return file.code.matches(of: reading.pattern).map { match in
                    Finding(
                        file: file.path, line: file.line(of: match.range.lowerBound),
                        message: "reads the wall clock (\(reading.name)) outside \(clockFile): take a WallClock instead (`.system` where the process is put together)")
                }
            }
        }
    }
}
