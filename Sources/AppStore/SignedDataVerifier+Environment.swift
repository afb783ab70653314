import Foundation

extension SignedDataVerifier {
    /// The environment a JWS claims (a transaction's or renewal info's `environment`, or a
    /// notification's addressee: `data`, `summary`, `externalPurchaseToken` or `appData`, as
    /// `NotificationAddressee` reads them), read WITHOUT verifying anything: only to choose which
    /// environment's verifier to run, which then checks that claim along with the signature. Nil
    /// when the JWS cannot be read or names none.
    public static func claimedEnvironment(of jws: String) -> AppStoreEnvironment? {
        struct Claims: Decodable {
            var environment: String?

            init(from decoder: any Decoder) throws {
                environment = try? decoder.container(keyedBy: AnyKey.self).decodeIfPresent(String.self, forKey: AnyKey("environment"))
            }
        }
        guard let token = try? CompactJWS(jws), let claims = try? JSONDecoder().decode(Claims.self, from: token.payload) else {
            return nil
        }
        let raw = claims.environment ?? (try? JSONDecoder().decode(NotificationEnvelope.self, from: token.payload))?.addressee.rawEnvironment
        return raw.flatMap(AppStoreEnvironment.init(appleValue:))
    }
}
