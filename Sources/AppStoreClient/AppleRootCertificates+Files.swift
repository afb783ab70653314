import AppStore
import Foundation
import X509

extension AppleRootCertificates {
    /// Loads certificates from files, DER or PEM (several PEM blocks per file allowed).
    public static func load(paths: [String]) throws(AppStoreError) -> [Certificate] {
        var certificates: [Certificate] = []
        for path in paths {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw AppStoreError(.invalidConfiguration, "cannot read root certificate file \(path)")
            }
            certificates += try Self.certificates(fileContents: Array(data), source: path)
        }
        return certificates
    }

    /// The roots the ledger trusts: Apple Root CA - G3 plus the files listed, comma-separated,
    /// in `APPLE_ROOT_CERTIFICATES` (docs/configuration.md), for example the simulator's root.
    public static func trusted(environment: [String: String]) throws(AppStoreError) -> [Certificate] {
        let paths = (environment["APPLE_ROOT_CERTIFICATES"] ?? "")
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return [try appleRootCAG3] + (try load(paths: paths))
    }
}
