/// Apple order ids, as on a customer's emailed receipt ("MK5TTTVWJH"): ten characters from
/// uppercase letters and digits.
///
/// Made from a counter by a bijection of the 36¹⁰ possible ids (multiply by a number prime to
/// 36, add an offset, modulo 36¹⁰), so ids never collide, look scattered like Apple's rather
/// than sequential, and the same run of purchases gets the same ids on every run.
enum AppleOrderId {
    static let alphabet: [Character] = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    static let length = 10
    /// 36¹⁰, the number of possible ids.
    static let space: UInt64 = 3_656_158_440_062_976
    /// Odd and not a multiple of 3, so multiplying by it permutes the residues modulo 36¹⁰.
    static let multiplier: UInt64 = 1_594_323_467_101
    static let offset: UInt64 = 2_937_861_502_216_417

    /// The id of the `number`th order (numbers below 36¹⁰ give distinct ids).
    static func make(_ number: UInt64) -> String {
        // The product of two residues is below 36²⁰: compute it in 128 bits, where the high
        // half stays below 36¹⁰ and so the division cannot overflow.
        let product = (number % space).multipliedFullWidth(by: multiplier)
        let scattered = space.dividingFullWidth((high: product.high, low: product.low)).remainder
        var value = (scattered + offset) % space
        var characters = [Character](repeating: "0", count: length)
        for index in stride(from: length - 1, through: 0, by: -1) {
            characters[index] = alphabet[Int(value % 36)]
            value /= 36
        }
        return String(characters)
    }

    /// True when `text` has the form of an Apple order id.
    static func isWellFormed(_ text: String) -> Bool {
        text.count == length && text.allSatisfy { alphabet.contains($0) }
    }
}
