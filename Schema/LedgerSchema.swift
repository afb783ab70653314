import Foundation

/// The numbered SQL migrations in `Schema/migrations`, shipped as a resource so the tool and
/// the tests apply the very same files.
public enum LedgerSchema {
    /// The folder holding `NNNN_name.sql` files, applied in the order of their numbers.
    public static var migrationsDirectory: URL? {
        Bundle.module.url(forResource: "migrations", withExtension: nil)
    }
}
