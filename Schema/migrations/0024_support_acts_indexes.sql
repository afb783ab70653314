-- Two partial indexes of the log for support acts (issue 26).
-- The offer signatures issued to a user (issue 26): a purchase redeeming an offer is decided
-- with the signatures the user was given for it, read from the log itself (a projection could
-- trail the purchase that follows its signature by a moment), so the delivery names the one
-- that allowed it. Partial: only those events are indexed, so other appends pay nothing.
CREATE INDEX events_offer_signatures_by_user ON events ((payload->>'user_id'))
    WHERE event_type = 'OfferSignatureIssued';
-- The mass extensions requested (`extend-renewals` looks for one a cut-off run left
-- unfinished before asking Apple for another): a handful of rows, found without a scan of the log.
CREATE INDEX events_mass_extensions ON events (position)
    WHERE event_type = 'MassRenewalExtensionRequested';
