import Testing

@testable import Sealing

@Suite struct DocumentEnvelopeTests {
    @Test func aDocumentSealsToTheSameEnvelopeAndOpensOnlyWithItsKey() throws {
        let subject = SubjectID.random()
        let key = SubjectKey.random()
        let receipt = Array(#"{"receipt-data":"MIIT…","app_account_token":"0d2b9a4c"}"#.utf8)
        let envelope = DocumentEnvelope.seal(receipt, subject: subject, key: key)
        #expect(DocumentEnvelope.seal(receipt, subject: subject, key: key) == envelope)
        #expect(DocumentEnvelope.subject(of: envelope) == subject)
        #expect(!String(decoding: envelope, as: UTF8.self).contains("0d2b9a4c"))
        #expect(try DocumentEnvelope.open(envelope, key: key) == receipt)
        #expect(throws: SealingError.cannotOpen) { try DocumentEnvelope.open(envelope, key: .random()) }
    }

    @Test func aDocumentInClearIsNoEnvelope() {
        let document = Array(#"{"status":0}"#.utf8)
        #expect(DocumentEnvelope.subject(of: document) == nil)
        #expect(throws: SealingError.notSealed) { try DocumentEnvelope.open(document, key: .random()) }
    }
}
