import EventStore
import Postgres
import Foundation
import Testing

@Suite("Event ids")
struct EventIDTests {
    @Test("default event ids are distinct RFC 4122 version 4 UUIDs")
    func versionFour() {
        let ids = (0..<10_000).map { _ in NewEvent(type: "T", payload: JSONB("{}")).id }
        #expect(Set(ids).count == ids.count)
        for id in ids.prefix(100) {
            let text = id.uuidString.lowercased()
            let characters = Array(text)
            #expect(characters[14] == "4", "version nibble of \(text)")
            #expect("89ab".contains(characters[19]), "variant of \(text)")
            #expect(UUID(uuidString: text) == id)
        }
        // Every other bit varies: 122 random bits, not a counter or a clock.
        let fixedBits = ids.reduce(into: (and: [UInt8](repeating: 0xFF, count: 16), or: [UInt8](repeating: 0, count: 16))) { acc, id in
            withUnsafeBytes(of: id.uuid) { bytes in
                for index in 0..<16 {
                    acc.and[index] &= bytes[index]
                    acc.or[index] |= bytes[index]
                }
            }
        }
        let constant = zip(fixedBits.and, fixedBits.or).reduce(0) { $0 + ($1.0 | ~$1.1).nonzeroBitCount }
        #expect(constant == 6, "only the 4 version and 2 variant bits are fixed")
    }
}
