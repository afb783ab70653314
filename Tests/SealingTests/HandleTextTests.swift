import Testing

@testable import Sealing

@Suite struct HandleTextTests {
    let subject = SubjectID.random()
    let key = SubjectKey.random()

    @Test func handlesAreFoundWhereverTheyStandAndReplacedEscapedForTheirText() {
        let alice = Handle.seal("alice", field: .userId, subject: subject, key: key)
        let quoted = Handle.seal(#"o"neil <b>"#, field: .userId, subject: subject, key: key)
        let json = Array(#"{"user_id":"\#(alice)","summary":"spent by \#(quoted), twice","n":"~1.sshort"}"#.utf8)
        #expect(HandleText.handles(in: json) == [alice, quoted])
        let names = [alice: "alice", quoted: #"o"neil <b>"#]
        let opened = HandleText.replacing(in: json) { names[$0].map(Escaping.json.escape) }
        #expect(String(decoding: opened, as: UTF8.self) == #"{"user_id":"alice","summary":"spent by o\"neil <b>, twice","n":"~1.sshort"}"#)
        let html = HandleText.replacing(in: Array("<td>\(quoted)</td>".utf8)) { names[$0].map(Escaping.html.escape) }
        #expect(String(decoding: html, as: UTF8.self) == "<td>o&quot;neil &lt;b&gt;</td>")
    }

    @Test func htmlTagsKeepTheirHandles() {
        let alice = Handle.seal("a&b", field: .userId, subject: subject, key: key)
        let page = Array(#"<a href="/console/lookup?q=\#(alice)">\#(alice)</a>"#.utf8)
        #expect(HandleText.handles(in: page, outsideTags: true) == [alice])
        let opened = HandleText.replacing(in: page, outsideTags: true) { _ in Escaping.html.escape("a&b") }
        #expect(String(decoding: opened, as: UTF8.self) == #"<a href="/console/lookup?q=\#(alice)">a&amp;b</a>"#)
    }

    @Test func textWithoutHandlesIsReturnedAsItIs() {
        let text = Array(#"{"user_id":"~1.\#(subject.rawValue).AAAA","other":"~1.x"}"#.utf8)
        #expect(HandleText.handles(in: text).isEmpty)
        #expect(HandleText.replacing(in: text) { _ in Array("x".utf8) } == text)
    }

    @Test func aHandleTheReplacementDeclinesStays() {
        let alice = Handle.seal("alice", field: .userId, subject: subject, key: key)
        let text = Array("a \(alice) b".utf8)
        #expect(HandleText.replacing(in: text) { _ in nil } == text)
    }

    @Test func controlCharactersAreEscapedForJSON() {
        #expect(String(decoding: Escaping.json.escape("a\u{1}b\\c\n"), as: UTF8.self) == #"a\u0001b\\c\n"#)
    }
}
