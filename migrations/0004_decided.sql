-- 0004_decided.sql - what issue 8 needs: journal events that cannot be
-- applied are quarantined, not retried for ever; oversize posts are held
-- as such
--
-- Applied by `listgate migrate` in one transaction on top of 0003 (or
-- 0002: the grants below are given only where the roles exist).

-- A journal event whose stored message cannot be read back (damaged
-- compressed bytes, a size that does not match them) is quarantined by
-- the first sync or rebuild that meets it: marked here with the time and
-- the reason, logged, reported by sync, and skipped.  Every later sync
-- and rebuild skips it without reading it; the token files stay equal
-- to a rebuild.  A repaired row (message_z and size restored, both
-- columns set back to NULL) is applied by the next rebuild.
ALTER TABLE train_journal
	ADD COLUMN quarantined_at timestamptz,
	ADD COLUMN quarantine_reason text;

-- Size is a verdict: a post larger than its list's max_post_bytes is
-- not scored; with oversize = hold (the default) it is stored whole and
-- held with the verdict (the reason it is held) 'oversize', score 0.
ALTER TABLE held_posts DROP CONSTRAINT held_posts_verdict_check;
ALTER TABLE held_posts ADD CONSTRAINT held_posts_verdict_check
	CHECK (verdict IN ('ham', 'unsure', 'spam', 'oversize'));

-- Grants, where the roles of 0003 exist: whoever syncs (the moderators'
-- approve syncs after recording; the administrator runs sync and
-- rebuild) marks what it cannot apply.
DO $$
BEGIN
	IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'listgate_moderator') THEN
		GRANT SELECT, UPDATE (quarantined_at, quarantine_reason)
		    ON train_journal TO listgate_moderator;
	END IF;
	IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'listgate_admin') THEN
		GRANT SELECT, UPDATE (quarantined_at, quarantine_reason)
		    ON train_journal TO listgate_admin;
	END IF;
END
$$;
