import Foundation
import Primitives
import Testing

@Suite("base64url without padding, as JWS segments use it")
struct Base64URLTests {
    @Test("every length round-trips, with only the URL-safe alphabet and no padding")
    func roundTrip() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("+") && !text.contains("/") && !text.contains("="))
            #expect(text == bytes.base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: ""))
            #expect(Base64URL.decode(text) == bytes)
        }
    }

    @Test("RFC 7515's example decodes; padding and foreign characters do not")
    func rejects() {
        // RFC 7515 appendix C: the bytes 3, 236, 255, 224, 193 are "A-z_4ME".
        #expect(Base64URL.decode("A-z_4ME") == Data([3, 236, 255, 224, 193]))
        #expect(Base64URL.encode(Data([3, 236, 255, 224, 193])) == "A-z_4ME")
        #expect(Base64URL.decode("A-z_4ME=") == nil)
        #expect(Base64URL.decode("A-z_4M!") == nil)
        #expect(Base64URL.decode("A") == nil)
    }
}
