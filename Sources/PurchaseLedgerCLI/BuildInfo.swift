import CBuildInfo
import Foundation

/// What `purchase-ledger --version` prints: the release number from the VERSION file, with
/// `+git.COMMIT` when Tools/release built another commit, and the commit; a developer's build,
/// which nothing stamped, says `+dev` and `unknown` rather than pretend to be the release.
package enum BuildInfo {
    package static let version: String = {
        let stamped = String(cString: pl_build_version())
        if !stamped.isEmpty { return stamped }
        return String(cString: pl_build_release()).trimmingCharacters(in: .whitespacesAndNewlines) + "+dev"
    }()

    package static let commit: String = {
        let stamped = String(cString: pl_build_commit())
        return stamped.isEmpty ? "unknown" : stamped
    }()
}
