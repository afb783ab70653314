import CBuildInfo
import Foundation

/// What `purchase-ledger --version` prints: the version Tools/release decided (the VERSION
/// file's release, with `+git.COMMIT` for any other commit) and the commit; a developer's
/// build, which nothing stamped, says the release `+dev` and `unknown` rather than pretend to be
/// the release.
package enum BuildInfo {
    private static let stamp = String(cString: pl_build_stamp()).split(whereSeparator: \.isWhitespace).map(String.init)

    package static let version: String = {
        if stamp.count == 2 { return stamp[0] }
        return String(cString: pl_build_release()).trimmingCharacters(in: .whitespacesAndNewlines) + "+dev"
    }()

    package static let commit: String = stamp.count == 2 ? stamp[1] : "unknown"
}
