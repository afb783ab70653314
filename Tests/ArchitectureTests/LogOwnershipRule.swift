/// Only the log's owners write SQL on `events` and `documents` (docs/architecture.md §2):
/// EventStore, whose table `events` is, and LedgerStore, which asks every question the ledger's
/// flow has of the log (`LedgerReads`, `DocumentStore`). Anyone else, the benches included,
/// goes through them, so the log's shape, its indexes and the statements using them are read
/// in one place. Schema/migrations (SQL files, not Swift) create the tables; the projections'
/// own tables (`projection_*`) are not the log and not held here.
enum LogOwnershipRule {
    /// The targets that may write SQL on the log.
    static let owners: Set<String> = ["EventStore", "LedgerStore"]

    /// A table of the log named where SQL names a table: after FROM, JOIN, INTO, UPDATE, TABLE,
    /// LIKE (a table of its shape), ONLY or TRUNCATE, across line breaks, quoted or not; or as an
    /// SQL string (`to_regclass('events')`). SQL keywords are matched in capitals, as the
    /// project writes them, so that a sentence ("missing from documents") is not SQL.
    static var tableReference: Regex<(Substring, Substring)> { #/(?:\b(?:FROM|JOIN|INTO|UPDATE|TABLE|LIKE|ONLY|TRUNCATE)\s+"?|')(events|documents)\b(?!_)/# }

    static func findings(in repository: Repository) -> [Finding] {
        let tableReference = Self.tableReference
        return repository.productionFiles.flatMap { file -> [Finding] in
            guard let target = repository.target(of: file), !owners.contains(target.name) else { return [] }
            return file.code.matches(of: tableReference).map { match in
                Finding(
                    file: file.path, line: file.line(of: match.1.startIndex),
                    message: "SQL on `\(match.1)` outside EventStore and LedgerStore: ask LedgerReads (LedgerStore) or EventStore instead")
            }
        }
    }
}
