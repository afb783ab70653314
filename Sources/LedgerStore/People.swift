import Ledger
import Sealing
import Synchronization

/// The people the ledger records, as its edges see them (docs/erasure.md): a user id coming in
/// becomes the handle the log records for it; a handle going out (in an answer, a page, a webhook
/// body, a command's output) becomes the user id again, or `erased:SUBJECT` once its subject's
/// key is gone. Nothing between the edges opens a handle.
public final class People: Sendable {
    public let subjects: SubjectStore

    /// Whether the log records `ErasureBegan`: once it does, for good; until then it is asked
    /// again at most every `sealingRecheck`, so a `purchase-ledger erasure begin` run elsewhere
    /// reaches this server within that.
    private let sealing = Mutex<(on: Bool, checked: ContinuousClock.Instant?)>((false, nil))
    static let sealingRecheck: Duration = .seconds(5)

    /// The handles of tokens this server issued or met, by the tokens' keyed look-ups: the
    /// receipt that follows an order names its token, and finds its handle without a query.
    /// Safe to keep across requests, unlike a key or an opened value: a handle reads nothing
    /// without its key, and no token is kept in clear. Dropped for a subject this server erases;
    /// one erased elsewhere keeps recording its (unreadable) handle instead of `erased:SUBJECT`.
    private let tokenHandles = Mutex<[[UInt8]: String]>([:])
    static let tokenHandlesKept = 20_000

    func recordedToken(ofLookup lookup: [UInt8]) -> String? {
        tokenHandles.withLock { $0[lookup] }
    }

    func remember(_ handle: String, ofTokenLookup lookup: [UInt8]) {
        tokenHandles.withLock { handles in
            // Bounded: once full it starts again, as a cache that only saves queries may.
            if handles.count >= Self.tokenHandlesKept { handles.removeAll(keepingCapacity: true) }
            handles[lookup] = handle
        }
    }

    /// Forgets the handles of `subject`'s tokens: it is being erased here.
    public func forgetTokens(of subject: SubjectID) {
        tokenHandles.withLock { handles in handles = handles.filter { Handle.subject(of: $0.value) != subject } }
    }

    public init(subjects: SubjectStore) {
        self.subjects = subjects
    }

    /// True once the log records that sealing began (`ErasureBegan`, docs/erasure.md). Before
    /// it, a server of an earlier release may be serving the same log beside this one, and it
    /// would not find a person by a handle: ids are recorded as they are.
    public func sealingBegan() async throws -> Bool {
        let now = ContinuousClock.now
        let known = sealing.withLock { $0 }
        if known.on { return true }
        if let checked = known.checked, now - checked < Self.sealingRecheck { return false }
        let on = try await subjects.pool.withConnection { connection in
            try connection.query("SELECT EXISTS (SELECT 1 FROM events WHERE stream_id = \(Streams.erasure))").first?.decode(0, as: Bool.self) ?? false
        }
        sealing.withLock { $0 = (on, now) }
        return on
    }

    /// The handles one request has already sealed, with the ids they hold, and the keys it has
    /// read: its answer names the person who sent it, and opening those takes no key from the
    /// database (`names(for:)`); a receipt's proof and Apple's answers are sealed under the key
    /// its person was found with, not one read again for each. Set for a request's duration by
    /// the HTTP layer; a key read in one request is never kept past it, so an erasure made
    /// elsewhere holds for the next request.
    @TaskLocal public static var sealedInThisRequest: SealedNames?

    public final class SealedNames: Sendable {
        let names = Mutex<[String: String]>([:])
        let keys = Mutex<[SubjectID: SubjectKey]>([:])
        /// User id → what the log records for it, as found in this request.
        let users = Mutex<[String: String]>([:])
        /// Token → what the log records for it (`recordedTokens`), found or not: an import's
        /// lines name tokens no one was issued, each looked up once per run, not once a line.
        let tokens = Mutex<[String: String]>([:])
        public init() {}
        func add(_ handle: String, _ userId: String) { names.withLock { $0[handle] = userId } }
        func name(of handle: String) -> String? { names.withLock { $0[handle] } }
        func remember(_ key: SubjectKey, of subject: SubjectID) { keys.withLock { $0[subject] = key } }
        func key(of subject: SubjectID) -> SubjectKey? { keys.withLock { $0[subject] } }
    }

    /// The key of `subject`: the one this request read already, else the store's (nil once erased).
    public func key(of subject: SubjectID) async throws -> SubjectKey? {
        if let known = Self.sealedInThisRequest?.key(of: subject) { return known }
        let key = try await subjects.key(of: subject)
        if let key { Self.sealedInThisRequest?.remember(key, of: subject) }
        return key
    }

    /// What the log records for `userId` from now on: its subject's handle, a new subject's when
    /// it has none (or its earlier one was erased). A live handle given back is its own answer.
    /// An id the log already holds in clear, recorded before erasure came, stays as it is: a
    /// subject for it would split its balances and streams in two (docs/erasure.md, "A log
    /// recorded before this release").
    public func handle(forUser userId: String) async throws -> String {
        guard try await sealingBegan() else { return userId }
        if let found = Self.sealedInThisRequest?.users.withLock({ $0[userId] }) { return found }
        if let known = try await knownHandle(forUser: userId) { return known }
        if try await recordedInClear(userId) {
            Self.sealedInThisRequest?.users.withLock { $0[userId] = userId }
            return userId
        }
        guard let (subject, key) = try await subjects.subject(forUser: userId, creating: true) else {
            throw SubjectStoreError.damagedKey("a subject just made")
        }
        Self.sealedInThisRequest?.remember(key, of: subject)
        let handle = Handle.seal(userId, field: .userId, subject: subject, key: key)
        Self.sealedInThisRequest?.add(handle, userId)
        Self.sealedInThisRequest?.users.withLock { $0[userId] = handle }
        return handle
    }

    /// True when the log holds `userId` in clear: an order, a delivery, a refund or an offer
    /// signature recorded for it before erasure came. Asked only of ids without a subject, along
    /// the expression indexes those events already have.
    public func recordedInClear(_ userId: String) async throws -> Bool {
        try await subjects.pool.withConnection { connection in
            try connection.query("""
                SELECT EXISTS (SELECT 1 FROM events WHERE event_type = 'OrderCreated' AND payload->>'user_id' = \(userId))
                    OR EXISTS (SELECT 1 FROM events WHERE event_type IN ('PurchaseDelivered', 'PurchaseRefunded') AND payload->>'user_id' = \(userId))
                    OR EXISTS (SELECT 1 FROM events WHERE event_type = 'OfferSignatureIssued' AND payload->>'user_id' = \(userId))
                """).first?.decode(0, as: Bool.self) ?? false
        }
    }

    /// `text` about the person `handle` names (a spend's reason), sealed under their key as a
    /// handle of its own, so erasing them erases it; as it is for a person recorded in clear.
    public func seal(text: String, aboutPersonOf handle: String) async throws -> String {
        guard let subject = Handle.subject(of: handle) else { return text }
        guard let key = try await key(of: subject) else {
            throw SubjectStoreError.damagedKey(subject.rawValue)
        }
        let sealed = Handle.seal(text, field: .text, subject: subject, key: key)
        Self.sealedInThisRequest?.add(sealed, text)
        return sealed
    }

    /// The handle `userId` is recorded under, for a read; nil when no live subject has it (never
    /// seen since erasure came, or erased). A live handle given back (the console's links carry
    /// them) is its own answer.
    public func knownHandle(forUser userId: String) async throws -> String? {
        if Handle.subject(of: userId) != nil {
            guard let name = try await names(for: [userId])[userId], !name.hasPrefix("erased:") else { return nil }
            return userId
        }
        guard let (subject, key) = try await subjects.subject(forUser: userId, creating: false) else { return nil }
        Self.sealedInThisRequest?.remember(key, of: subject)
        let handle = Handle.seal(userId, field: .userId, subject: subject, key: key)
        Self.sealedInThisRequest?.add(handle, userId)
        Self.sealedInThisRequest?.users.withLock { $0[userId] = handle }
        return handle
    }

    /// What each of `handles` shows: the value it holds, or `erased:SUBJECT` when its subject's
    /// key is gone. What is not a handle is absent.
    public func names(for handles: Set<String>) async throws -> [String: String] {
        var names: [String: String] = [:]
        var sealed: [(String, SubjectID)] = []
        for handle in handles {
            guard let subject = Handle.subject(of: handle) else { continue }
            if let known = Self.sealedInThisRequest?.name(of: handle) {
                names[handle] = known
            } else {
                sealed.append((handle, subject))
            }
        }
        guard !sealed.isEmpty else { return names }
        var keys: [SubjectID: SubjectKey] = [:]
        var unknown: Set<SubjectID> = []
        for (_, subject) in sealed {
            if let known = Self.sealedInThisRequest?.key(of: subject) { keys[subject] = known } else { unknown.insert(subject) }
        }
        if !unknown.isEmpty { keys.merge(try await subjects.keys(of: unknown)) { known, _ in known } }
        for (handle, subject) in sealed {
            guard let key = keys[subject] else {
                names[handle] = Handle.erased(subject)
                continue
            }
            // A handle of a live subject that does not open was not sealed by this ledger for
            // that subject: shown as it is, never as someone's id.
            for field in [SealedField.userId, .appAccountToken, .text] {
                if let value = try? Handle.open(handle, field: field, key: key) {
                    names[handle] = value
                    break
                }
            }
        }
        return names
    }

    /// `text` with every handle in it opened, each written with `escaping`.
    /// HTML's tags are left alone (`HandleText.replacing(in:outsideTags:)`).
    public func open(_ text: [UInt8], escaping: Escaping) async throws -> [UInt8] {
        try await open([text], escaping: escaping)[0]
    }

    /// Each of `texts` opened, their keys read in one query: a page of webhook bodies, a report's lines.
    public func open(_ texts: [[UInt8]], escaping: Escaping) async throws -> [[UInt8]] {
        let outsideTags = escaping == .html
        let handles = texts.reduce(into: Set<String>()) { $0.formUnion(HandleText.handles(in: $1, outsideTags: outsideTags)) }
        guard !handles.isEmpty else { return texts }
        let names = try await names(for: handles)
        return texts.map { text in HandleText.replacing(in: text, outsideTags: outsideTags) { handle in names[handle].map(escaping.escape) } }
    }

    public func open(_ text: String, escaping: Escaping = .none) async throws -> String {
        String(decoding: try await open(Array(text.utf8), escaping: escaping), as: UTF8.self)
    }
}
