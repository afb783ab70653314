import ArgumentParser
import Foundation
import Ledger
import LedgerService
import LedgerStore
import Logging

/// `purchase-ledger erase-user ID --reason R`: `DELETE /v1/users/{user_id}` from the command line
/// (docs/erasure.md), as `ledger_app`.
struct EraseUserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "erase-user",
        abstract: "Forget a person: destroy the key their id and data are sealed under; the chain, the money and counts stay.",
        discussion: """
            Records UserErased (the subject, the reason, the time; never the id) and tells webhooks user.erased. \
            Afterwards the id reads nowhere and shows as erased:SUBJECT. Running it again with the same --request-id \
            prints the first result. Exit 1 when the ledger holds no such user, 2 when the user was recorded before \
            erasure came (docs/erasure.md).
            """)

    @OptionGroup var database: DatabaseOptions

    @Argument(help: "The app's user id")
    var userId: String

    @Option(help: "Why (kept with the erasure; must not contain the id)")
    var reason: String

    @Option(help: "The request's id: the same again answers the first result (default: a new one)")
    var requestId: String = UUID().uuidString.lowercased()

    func run() async throws {
        let logger = Logger(label: "purchase-ledger.erase-user")
        let (userId, reason, requestId) = (userId, reason, requestId)
        let erased = try await database.withPurchaseService(logger: logger) { service in
            do {
                return try await service.eraseUser(userId, reason: reason, requestId: requestId, metadata: RequestMetadata(requestId: requestId, actor: "cli"))
            } catch let error as LedgerServiceError where error.code == .notFound || error.code == .recordedBeforeErasure {
                FileHandle.standardError.write(Data("erase-user: \(error.message)\n".utf8))
                throw ExitCode(error.code == .notFound ? 1 : 2)
            }
        }
        print("erased: subject \(erased.subject) at \(RevenueDay.iso8601(erased.erasedAtMs)) (request \(requestId))")
    }
}
