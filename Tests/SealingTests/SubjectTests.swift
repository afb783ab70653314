import Testing

@testable import Sealing

@Suite struct SubjectTests {
    @Test func subjectsAreTwentySevenCharactersOfBase32AndDiffer() {
        let subjects = (0..<1_000).map { _ in SubjectID.random() }
        #expect(Set(subjects).count == 1_000)
        for subject in subjects {
            #expect(subject.rawValue.utf8.count == 27)
            #expect(SubjectID(subject.rawValue) == subject)
        }
    }

    @Test(arguments: ["", "s", "x" + String(repeating: "a", count: 26), "s" + String(repeating: "a", count: 25), "s" + String(repeating: "1", count: 26), "S" + String(repeating: "a", count: 26)])
    func whatIsNoSubjectIsRefused(_ text: String) {
        #expect(SubjectID(text) == nil)
    }

    @Test func aKeyIsThirtyTwoBytes() {
        #expect(SubjectKey(bytes: Array(repeating: 1, count: 31)) == nil)
        #expect(SubjectKey(bytes: Array(repeating: 1, count: 32))?.bytes == Array(repeating: 1, count: 32))
        #expect(SubjectKey.random().bytes != SubjectKey.random().bytes)
    }

    @Test func lookUpsAreKeyedAndTellKindsApart() {
        let key = LookupKey.random()
        #expect(key.user("alice") == key.user("alice"))
        #expect(key.user("alice") != key.user("Alice"))
        #expect(key.user("alice") != LookupKey.random().user("alice"))
        #expect(key.user("x") != key.token("x"))
        // A token is found whatever its case.
        #expect(key.token("0D2B9A4C-1F7E-4E8A-9C7B-6A5D4E3F2A1B") == key.token("0d2b9a4c-1f7e-4e8a-9c7b-6a5d4e3f2a1b"))
    }
}
