import Crypto
import Foundation
import Ledger
import LedgerWebhooks
import Spawning
import Testing

/// Standard Webhooks signatures (standardwebhooks.com, "Signature scheme"), the secrets and
/// endpoints of the configuration, and the retry delays: pure, no database.
@Suite("Webhook signatures, secrets, endpoints and backoff")
struct SignatureTests {
    /// A secret of `count` bytes, each `byte`.
    static func secret(bytes count: Int, of byte: UInt8 = 7) -> String {
        "whsec_" + Data(repeating: byte, count: count).base64EncodedString()
    }

    static func signer(_ text: String) throws -> WebhookSigner {
        WebhookSigner(secrets: try WebhookSecrets(text))
    }

    // MARK: Signatures

    /// The standard's published test vector, the one every library of the standard tests its
    /// `sign` against: github.com/standard-webhooks/standard-webhooks,
    /// libraries/python/tests/test_webhooks.py, `test_sign_function` (the same in
    /// libraries/javascript/src/webhook.test.ts, "sign function works"; read at commit
    /// b2fa7b8719fb75d326b591077f5d1b385cfcdfae). Its secret decodes to 24 bytes.
    @Test("WebhookSigner signs the standard's published test vector exactly")
    func publishedTestVector() throws {
        let signer = try Self.signer("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        let body = Data(#"{"test": 2432232314}"#.utf8)
        let signature = signer.signature(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: body)
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        #expect(signer.verify(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: body, header: signature))
    }

    @Test("two secrets: two space-separated v1 signatures, each its own secret's; verify takes either and nothing changed")
    func rotation() throws {
        let old = Self.secret(bytes: 32, of: 1)
        let new = Self.secret(bytes: 48, of: 2)
        let both = try Self.signer(old + " " + new)
        let (id, timestamp, body) = ("evt_7_1", Int64(1_795_000_000), Data(#"{"data":{"position":7},"type":"balance.changed"}"#.utf8))

        let header = both.signature(id: id, timestamp: timestamp, body: body)
        let parts = header.split(separator: " ").map(String.init)
        try #require(parts.count == 2, "\(header)")
        #expect(parts.allSatisfy { $0.hasPrefix("v1,") })
        let oldAlone = try Self.signer(old)
        let newAlone = try Self.signer(new)
        #expect(parts[0] == oldAlone.signature(id: id, timestamp: timestamp, body: body))
        #expect(parts[1] == newAlone.signature(id: id, timestamp: timestamp, body: body))
        #expect(parts[0] != parts[1])

        // A receiver holding either secret alone verifies the message; one holding neither does not.
        #expect(oldAlone.verify(id: id, timestamp: timestamp, body: body, header: header))
        #expect(newAlone.verify(id: id, timestamp: timestamp, body: body, header: header))
        let stranger = try Self.signer(Self.secret(bytes: 32, of: 3))
        #expect(!stranger.verify(id: id, timestamp: timestamp, body: body, header: header))
        // Each single signature is its own secret's only.
        #expect(oldAlone.verify(id: id, timestamp: timestamp, body: body, header: parts[0]))
        #expect(!oldAlone.verify(id: id, timestamp: timestamp, body: body, header: parts[1]))
        #expect(!newAlone.verify(id: id, timestamp: timestamp, body: body, header: parts[0]))
        // The signing side verifies with either of its secrets.
        #expect(both.verify(id: id, timestamp: timestamp, body: body, header: parts[0]))
        #expect(both.verify(id: id, timestamp: timestamp, body: body, header: parts[1]))

        // Anything signed changed: refused.
        var tampered = body
        tampered[tampered.startIndex + 10] ^= 0x01
        #expect(!both.verify(id: id, timestamp: timestamp, body: tampered, header: header))
        #expect(!both.verify(id: id, timestamp: timestamp, body: body + Data(" ".utf8), header: header))
        #expect(!both.verify(id: "evt_7_2", timestamp: timestamp, body: body, header: header))
        #expect(!both.verify(id: id, timestamp: timestamp + 1, body: body, header: header))
        // Not a v1 signature, or not base64: refused, not a crash.
        #expect(!both.verify(id: id, timestamp: timestamp, body: body, header: parts[0].replacingOccurrences(of: "v1,", with: "v2,")))
        #expect(!both.verify(id: id, timestamp: timestamp, body: body, header: "v1,%%%"))
        #expect(!both.verify(id: id, timestamp: timestamp, body: body, header: ""))
    }

    // MARK: Secrets

    @Test("a secret is whsec_ and base64 of 24 to 64 bytes; one, or two while rotating")
    func secrets() throws {
        #expect(try WebhookSecrets(Self.secret(bytes: 24)).keys.count == 1)
        #expect(try WebhookSecrets(Self.secret(bytes: 64)).keys.count == 1)
        #expect(try WebhookSecrets(Self.secret(bytes: 32, of: 1) + " " + Self.secret(bytes: 32, of: 2)).keys.count == 2)

        let base64 = String(Self.secret(bytes: 32).dropFirst("whsec_".count))
        let refused = [
            "",
            base64,
            "whsec" + base64,
            "whsec-" + base64,
            "whsec_%%%%not-base64%%%%",
            "whsec_",
            Self.secret(bytes: 23),
            Self.secret(bytes: 65),
            [Self.secret(bytes: 32, of: 1), Self.secret(bytes: 32, of: 2), Self.secret(bytes: 32, of: 3)].joined(separator: " "),
        ]
        for text in refused {
            #expect(throws: WebhookSecrets.Invalid.self, "\(text)") { _ = try WebhookSecrets(text) }
        }
    }

    @Test("a generated secret parses back: 32 random bytes")
    func generatedSecret() throws {
        let text = WebhookSecrets.generate()
        #expect(text.hasPrefix("whsec_"))
        let secrets = try WebhookSecrets(text)
        try #require(secrets.keys.count == 1)
        #expect(secrets.keys[0].bitCount == 256)
        #expect(WebhookSecrets.generate() != text)
    }

    // MARK: Endpoints

    @Test("LEDGER_WEBHOOKS parses name=url pairs")
    func endpoints() throws {
        let endpoints = try WebhookEndpoint.parse("a=http://127.0.0.1:1/x,b_2=https://h.example/y")
        try #require(endpoints.count == 2)
        #expect(endpoints[0].name == "a")
        #expect(endpoints[0].url.absoluteString == "http://127.0.0.1:1/x")
        #expect(endpoints[1].name == "b_2")
        #expect(endpoints[1].url.absoluteString == "https://h.example/y")
        #expect(try WebhookEndpoint.parse("").isEmpty)
    }

    @Test("LEDGER_WEBHOOKS refuses bad names, non-http URLs, a name twice, an item without =", arguments: [
        "A=http://h.example/x",
        "=http://h.example/x",
        "a b=http://h.example/x",
        "a.b=http://h.example/x",
        "a=ftp://h.example/x",
        "a=file:///tmp/x",
        "a=h.example/x",
        "a=",
        "a=http://h.example/1,a=http://h.example/2",
        "a",
        "a=http://h.example/x,b",
    ])
    func endpointsRefused(text: String) {
        #expect(throws: WebhookEndpoint.Invalid.self) { _ = try WebhookEndpoint.parse(text) }
    }

    // MARK: Backoff

    /// The step after `attempts` failures: 2 s doubling, at most an hour.
    static func step(afterAttempts attempts: Int) -> Int64 {
        attempts < 12 ? Int64(1) << attempts : 3_600
    }

    @Test("the first retry comes within 2 s")
    func firstRetry() {
        for unit in [0, 0.25, 0.5, 0.999, 1] {
            let delay = WebhookBackoff.delay(afterAttempts: 1, unit: unit)
            #expect(delay <= .seconds(2), "unit \(unit): \(delay)")
            #expect(delay >= .seconds(1), "unit \(unit): \(delay)")
        }
    }

    @Test("delays double, never exceed an hour, and never fall below half their step")
    func doublingAndBounds() {
        // Units whose products with the steps are exact, so doubling is exact too.
        for unit in [0, 0.25, 0.5, 0.75] {
            for attempts in 1...10 {
                #expect(
                    WebhookBackoff.delay(afterAttempts: attempts + 1, unit: unit) == WebhookBackoff.delay(afterAttempts: attempts, unit: unit) * 2,
                    "attempts \(attempts), unit \(unit)")
            }
        }
        #expect(WebhookBackoff.ceiling == .seconds(3_600))
        for attempts in Array(1...50) + [64, 1_000, Int.max] {
            let step = Self.step(afterAttempts: min(attempts, 50))
            for unit in [0, 0.001, 0.5, 0.999, 1] {
                let delay = WebhookBackoff.delay(afterAttempts: attempts, unit: unit)
                #expect(delay <= WebhookBackoff.ceiling, "attempts \(attempts), unit \(unit): \(delay)")
                #expect(delay <= .seconds(step), "attempts \(attempts), unit \(unit): \(delay)")
                #expect(delay >= .milliseconds(step * 500), "attempts \(attempts), unit \(unit): \(delay)")
            }
        }
        #expect(WebhookBackoff.delay(afterAttempts: 50, unit: 0.999) > .seconds(3_590))
    }

    // MARK: The standard's own library

    @Test(
        "docs/webhooks.md's Python receiver, with the standard's own library, verifies what WebhookSigner signs",
        ReadmeReceiver.available)
    func readmeReceiver() async throws {
        if let problem = await ReadmeReceiver.problem() {
            // Reached only under CI (the trait disables the test elsewhere): there a missing
            // library is a failure, never a skip.
            Issue.record(Comment(rawValue: "under CI=true: " + problem))
            return
        }
        let readme = try String(contentsOf: ReadmeReceiver.readme, encoding: .utf8)
        let snippet = try #require(
            ReadmeReceiver.pythonBlock(in: readme, under: ReadmeReceiver.heading),
            "docs/webhooks.md has no ```python block under '\(ReadmeReceiver.heading)'")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("readme-receiver-\(UUID().uuidString).py")
        try Data(snippet.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        // A message as the ledger sends it: its body's bytes (a non-ASCII user id included), its
        // id, and the current time, since the library refuses a timestamp 5 minutes off.
        let message = WebhookEvent(
            position: 42, hash: [UInt8](repeating: 0xab, count: 32), sequence: 0, type: .balanceChanged, userId: "user-é",
            recordedAtMs: 1_795_000_000_123, fields: [:])
        let body = message.body
        let timestamp = Int64(Date().timeIntervalSince1970)
        let old = WebhookSecrets.generate()
        let new = WebhookSecrets.generate()

        // One secret.
        let single = try Self.signer(old).signature(id: message.id, timestamp: timestamp, body: body)
        let accepted = try await ReadmeReceiver.receive(
            file, secret: old, id: message.id, timestamp: timestamp, body: body, signature: single)
        #expect(accepted.exit == .success, "\(accepted.output)")
        #expect(accepted.output.contains("verified evt_42_abababababababab_0"), "\(accepted.output)")
        #expect(accepted.output.contains("balance.changed 42"), "\(accepted.output)")

        // Rotating: both signatures sent; a receiver holding either secret accepts.
        let both = try Self.signer(old + " " + new).signature(id: message.id, timestamp: timestamp, body: body)
        for held in [old, new] {
            let run = try await ReadmeReceiver.receive(file, secret: held, id: message.id, timestamp: timestamp, body: body, signature: both)
            #expect(run.exit == .success, "\(run.output)")
            #expect(run.output.contains("verified evt_42_abababababababab_0"), "\(run.output)")
        }

        // A changed body, or a secret the ledger does not sign with: refused.
        var tampered = body
        tampered.append(contentsOf: Array(" ".utf8))
        let refusedBody = try await ReadmeReceiver.receive(
            file, secret: old, id: message.id, timestamp: timestamp, body: tampered, signature: single)
        #expect(refusedBody.exit != .success, "\(refusedBody.output)")
        #expect(!refusedBody.output.contains("verified"), "\(refusedBody.output)")
        let refusedSecret = try await ReadmeReceiver.receive(
            file, secret: WebhookSecrets.generate(), id: message.id, timestamp: timestamp, body: body, signature: both)
        #expect(refusedSecret.exit != .success, "\(refusedSecret.output)")
        #expect(!refusedSecret.output.contains("verified"), "\(refusedSecret.output)")
    }
}

/// The Python receiver of docs/webhooks.md ("A receiver"), run with the Standard Webhooks Python library
/// (`standardwebhooks` on PyPI), which `Tools/test` installs in a virtualenv of its own and names
/// in `PL_WEBHOOKS_PYTHON` (Tools/lib/webhooks-python.sh).
///
/// The rule is PostgreSQL's and the browser's (README.md): under `CI=true` a missing library is a
/// test failure with the reason; run by hand without it, the test is disabled with that reason.
enum ReadmeReceiver {
    static let environment = ProcessInfo.processInfo.environment
    static let heading = "## A receiver"
    static let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/webhooks.md")

    /// `CI` set to anything but empty, `0`, `false` or `no`.
    static var underCI: Bool {
        guard let value = environment["CI"]?.lowercased() else { return false }
        return !["", "0", "false", "no"].contains(value)
    }

    /// Tools/test's python, else python3 on PATH.
    static var python: (executable: String, arguments: [String]) {
        if let path = environment["PL_WEBHOOKS_PYTHON"], !path.isEmpty { return (path, []) }
        return ("/usr/bin/env", ["python3"])
    }

    static func run(_ arguments: [String], environment extra: [String: String] = [:]) async throws -> (exit: ProcessExit, output: String) {
        var environment = Self.environment
        environment.merge(extra) { _, new in new }
        let (executable, leading) = python
        return try await ChildProcess.run(executable, leading + arguments, environment: environment)
    }

    /// Why the library cannot be used, or nil when it can.
    static func problem() async -> String? {
        let command = ([python.executable] + python.arguments).joined(separator: " ")
        do {
            let (exit, output) = try await run(["-c", "import standardwebhooks.webhooks"])
            if exit == .success { return nil }
            return "\(command) cannot import standardwebhooks (\(exit)): \(output.suffix(400)). "
                + "Run Tools/test (it installs it and sets PL_WEBHOOKS_PYTHON) or `pip install standardwebhooks==1.1.0`"
        } catch {
            return "could not run \(command): \(error)"
        }
    }

    /// Enabled when the library is there, and always under CI, so that its absence fails.
    static var available: ConditionTrait {
        .enabled("needs python3 with standardwebhooks (Tools/test installs it; under CI=true its absence is a failure, not a skip)") {
            if underCI { return true }
            return await problem() == nil
        }
    }

    /// The first ```python block of the section `heading`, or nil.
    static func pythonBlock(in text: String, under heading: String) -> String? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0 == heading }) else { return nil }
        var block: [Substring]?
        for line in lines[(start + 1)...] {
            if let collected = block {
                if line == "```" { return collected.joined(separator: "\n") + "\n" }
                block?.append(line)
            } else if line.hasPrefix("## ") {
                return nil
            } else if line == "```python" {
                block = []
            }
        }
        return nil
    }

    /// Runs the receiver as a script on one delivery, given as docs/webhooks.md says.
    static func receive(
        _ script: URL, secret: String, id: String, timestamp: Int64, body: Data, signature: String
    ) async throws -> (exit: ProcessExit, output: String) {
        try await run([script.path], environment: [
            "WEBHOOK_SECRET": secret, "WEBHOOK_ID": id, "WEBHOOK_TIMESTAMP": String(timestamp),
            "WEBHOOK_SIGNATURE": signature, "WEBHOOK_BODY": String(decoding: body, as: UTF8.self),
        ])
    }
}
