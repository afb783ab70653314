import Foundation

extension SignedDataVerifier {
    /// The environment a JWS claims (`environment`, or `data.environment` / `summary.environment`
    /// in a notification), read WITHOUT verifying anything: only to choose which environment's
    /// verifier to run, which then checks that field along with the signature. Nil when the JWS
    /// cannot be read or names none.
    public static func claimedEnvironment(of jws: String) -> AppStoreEnvironment? {
        struct Claims: Decodable {
            struct Inner: Decodable { var environment: String? }
            var environment: String?
            var data: Inner?
            var summary: Inner?
        }
        guard let token = try? CompactJWS(jws), let claims = try? JSONDecoder().decode(Claims.self, from: token.payload) else {
            return nil
        }
        return (claims.environment ?? claims.data?.environment ?? claims.summary?.environment).flatMap(AppStoreEnvironment.init(appleValue:))
    }
}
