import Crypto
import Foundation

/// The simulator's receipt-data: an opaque token naming one issued receipt, authenticated with
/// a key that lives only in this simulator, so that forged or foreign data answers 21003.
///
/// Wire form: base64 of `"PLSIM1.<environment>.<receipt number>.<HMAC-SHA256 hex>"`. It plays the
/// part of Apple's PKCS#7 receipt: the device holds it, the server sends it to verifyReceipt.
struct ReceiptToken: Sendable, Hashable {
    var environment: SimulatedEnvironment
    var receiptNumber: Int

    /// Why receipt-data could not be read, mapped to Apple's statuses by the caller.
    enum Failure: Error {
        /// Not base64, or empty: Apple answers 21002.
        case malformed
        /// Well-formed but not issued by this simulator: Apple answers 21003.
        case notAuthentic
    }

    private static let magic = "PLSIM1"

    /// The base64 receipt-data for this token, authenticated with `key`.
    func encoded(key: SymmetricKey) -> String {
        let body = "\(Self.magic).\(environment.pathSegment).\(receiptNumber)"
        return Data("\(body).\(Self.mac(body, key: key))".utf8).base64EncodedString()
    }

    /// Reads receipt-data sent to verifyReceipt.
    static func decode(_ receiptData: String, key: SymmetricKey) throws(Failure) -> ReceiptToken {
        let trimmed = receiptData.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, let bytes = Data(base64Encoded: trimmed, options: .ignoreUnknownCharacters),
            !bytes.isEmpty
        else { throw .malformed }
        guard let text = String(data: bytes, encoding: .utf8) else { throw .notAuthentic }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 4, parts[0] == magic,
            let environment = SimulatedEnvironment.allCases.first(where: { $0.pathSegment == parts[1] }),
            let number = Int(parts[2])
        else { throw .notAuthentic }
        let body = parts[0...2].joined(separator: ".")
        // Compare MACs in constant time: the token is an authenticator, however small the stakes.
        guard let given = Data(hexString: parts[3]),
            HMAC<SHA256>.isValidAuthenticationCode(given, authenticating: Data(body.utf8), using: key)
        else { throw .notAuthentic }
        return ReceiptToken(environment: environment, receiptNumber: number)
    }

    private static func mac(_ body: String, key: SymmetricKey) -> String {
        HMAC<SHA256>.authenticationCode(for: Data(body.utf8), using: key)
            .map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined()
    }
}

extension Data {
    /// Bytes from lowercase or uppercase hex; nil when not an even run of hex digits.
    fileprivate init?(hexString: String) {
        guard hexString.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hexString.count / 2)
        var index = hexString.startIndex
        while index < hexString.endIndex {
            let next = hexString.index(index, offsetBy: 2)
            guard let byte = UInt8(hexString[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        self.init(bytes)
    }
}
