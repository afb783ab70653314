import EventStore
import LedgerSchema

extension Migrator {
    /// The ledger's migrations: the numbered files of `Schema/migrations` shipped with this build
    /// (the log's tables and every projection's). The one place the log's Migrator meets the
    /// ledger's schema: EventStore applies what it is given and does not depend on LedgerSchema.
    public static func ledger() throws -> Migrator {
        guard let directory = LedgerSchema.migrationsDirectory else {
            throw MigrationError("the Schema/migrations resource is missing from this build")
        }
        return try Migrator(directory: directory)
    }
}
