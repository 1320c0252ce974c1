-- 0004_decided.sql - what issue 8 needs: decided posts remembered (a
-- retry is answered from the first decision), journal events that
-- cannot be applied quarantined (not retried for ever), oversize posts
-- held as such
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

-- A moderator's decision journals the post with its SHA-256, so that
-- sync records the decision in each host's token file: a filter
-- answering the MTA's retry of a decided post looks there, with no
-- database on the pass path.  Decisions already journaled get theirs.
ALTER TABLE train_journal ADD COLUMN raw_sha256 bytea;
UPDATE train_journal j SET raw_sha256 = h.raw_sha256
	FROM held_posts h WHERE j.source = 'moderation' AND j.post_id = h.id;

-- Size is a verdict: a post larger than its list's max_post_bytes is
-- not scored; with oversize = hold (the default) it is stored whole and
-- held with the verdict (the reason it is held) 'oversize', score 0.
ALTER TABLE held_posts DROP CONSTRAINT held_posts_verdict_check;
ALTER TABLE held_posts ADD CONSTRAINT held_posts_verdict_check
	CHECK (verdict IN ('ham', 'unsure', 'spam', 'oversize'));

-- Decided posts are remembered by list and SHA-256.  The MTA retries a
-- post whose filter was killed after its INSERT committed; when a
-- moderator decided that post in between, the retry must not be held
-- again (and released twice) nor passed because the approval trained
-- it as ham.  Every decision that trains (approved, rejected,
-- discarded) records the latest decision on these bytes here, in its
-- own transaction; filter answers a retry from it for the list's
-- hold_expiry_days.  One small row per decided post: no message, no
-- header text, so the filter's role may read it.
CREATE TABLE decided_posts (
	list		text NOT NULL
			CHECK (list ~ '^[a-z0-9][a-z0-9._-]*$' AND length(list) <= 64),
	raw_sha256	bytea NOT NULL CHECK (length(raw_sha256) = 32),
	post_id		bigint NOT NULL,
	status		text NOT NULL
			CHECK (status IN ('approved', 'rejected', 'discarded')),
	decided_at	timestamptz NOT NULL,
	PRIMARY KEY (list, raw_sha256)
);

-- what moderators decided before this migration
INSERT INTO decided_posts (list, raw_sha256, post_id, status, decided_at)
SELECT DISTINCT ON (list, raw_sha256) list, raw_sha256, id, status,
       decided_at
  FROM held_posts
 WHERE status IN ('approved', 'rejected', 'discarded')
   AND decided_at IS NOT NULL
   AND decided_by IS DISTINCT FROM 'listgate filter'
 ORDER BY list, raw_sha256, decided_at DESC, id DESC;

-- Grants, where the roles of 0003 exist.  The filter reads the decided
-- posts (the hold path answers a retry from them); the moderators
-- record decisions there, and, as whoever syncs (approve syncs after
-- recording; the administrator runs sync and rebuild), mark the journal
-- events they cannot apply.
DO $$
BEGIN
	IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'listgate_filter') THEN
		GRANT SELECT ON decided_posts TO listgate_filter;
	END IF;
	IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'listgate_moderator') THEN
		GRANT SELECT, INSERT, UPDATE ON decided_posts
		    TO listgate_moderator;
		GRANT SELECT, UPDATE (quarantined_at, quarantine_reason)
		    ON train_journal TO listgate_moderator;
	END IF;
	IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'listgate_admin') THEN
		GRANT ALL ON decided_posts TO listgate_admin;
		GRANT SELECT, UPDATE (quarantined_at, quarantine_reason)
		    ON train_journal TO listgate_admin;
		-- owned by the administrator like the tables of 0001-0003
		IF pg_has_role(current_user, 'listgate_admin', 'MEMBER') THEN
			ALTER TABLE decided_posts OWNER TO listgate_admin;
		END IF;
	END IF;
END
$$;
