/// What a sealed value is, authenticated with it: a token's sealed bytes cannot be passed off as
/// a user id, nor one subject's as another's.
public enum SealedField: String, Sendable, CaseIterable {
    case userId = "user_id"
    case appAccountToken = "app_account_token"
    /// Free text about the person: a spend's reason, support's reason or note.
    case text
    /// A document submitted for the person or naming them (`DocumentEnvelope`).
    case document
}
