-- 0008_site_feed.sql - the site store's feed: every list's training
-- events, numbered in the order the site store applies them
--
-- Applied by `listgate migrate` in one transaction on top of 0005
-- (0006 and 0007 belong to other issues).
--
-- The site store (listgate.conf's site_list) learns the events of every
-- list's journal, each exactly once.  One list's events become visible
-- in id order (its journal lock), but different lists' do not: an event
-- of one list may commit after a higher id of another, so no single
-- journal position can say what the site store has applied.  Instead
-- `listgate sync --site` feeds the events in: under one lock, in one
-- transaction at a time, every list's events after the last one fed for
-- that list (site_fed) get a feed number, in id order, taken from the
-- journal's own id sequence.  Feed numbers therefore become visible in
-- order, and the site store's token file records a feed number as its
-- position, as any token file records a journal id, and applies each
-- event once.  Sharing the sequence means a feed number is never a
-- list's journal id: a token file that was built from one list's
-- journal is told apart from one built from the feed.

CREATE TABLE site_feed (
	seq		bigint PRIMARY KEY CHECK (seq > 0),
	event_id	bigint NOT NULL UNIQUE
			REFERENCES train_journal (id) ON DELETE CASCADE
);

-- per list, the last of its journal events fed
CREATE TABLE site_fed (
	list		text PRIMARY KEY
			CHECK (list ~ '^[a-z0-9][a-z0-9._-]*$' AND length(list) <= 64),
	fed_to		bigint NOT NULL CHECK (fed_to > 0)
);

-- sync --site feeds and reads the feed: moderators (who journal and
-- sync); the administrator owns it
DO $$
BEGIN
	IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'listgate_moderator') THEN
		GRANT SELECT, INSERT ON site_feed TO listgate_moderator;
		GRANT SELECT, INSERT, UPDATE ON site_fed TO listgate_moderator;
	END IF;
	IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'listgate_admin') THEN
		GRANT ALL ON site_feed, site_fed TO listgate_admin;
		-- owned by the administrator like the tables of 0001-0005
		IF pg_has_role(current_user, 'listgate_admin', 'MEMBER') THEN
			ALTER TABLE site_feed OWNER TO listgate_admin;
			ALTER TABLE site_fed OWNER TO listgate_admin;
		END IF;
	END IF;
END
$$;
