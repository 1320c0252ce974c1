-- 0006_stats.sql - what `listgate stats` and the expiry policy need:
-- the last reminder of a held post, and indexes for counting a list's
-- posts by arrival and by decision
--
-- Applied by `listgate migrate` in one transaction.  (0003 to 0005 come
-- from other work; 0003 creates the roles listgate_filter,
-- listgate_moderator and listgate_admin, so the grants below are given
-- only where those roles exist.)

-- expire_action = remind: a held post past its list's hold_expiry_days
-- stays held and its moderators are notified again; this says when, so
-- the next `listgate expire` reminds again only hold_expiry_days later
ALTER TABLE held_posts ADD COLUMN reminded_at timestamptz;

-- stats: a list's posts by arrival day, and its decisions by decision
-- day (held_posts_queue leads with status, which stats does not fix)
CREATE INDEX held_posts_arrived ON held_posts (list, arrived_at);
CREATE INDEX held_posts_decided ON held_posts (list, decided_at)
	WHERE decided_at IS NOT NULL;

-- expire runs as a moderator (it decides through the decision path) or
-- as the administrator; stats only reads
DO $$
BEGIN
	IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'listgate_moderator') THEN
		GRANT UPDATE (reminded_at) ON held_posts TO listgate_moderator;
	END IF;
	IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'listgate_admin') THEN
		GRANT SELECT, UPDATE (reminded_at) ON held_posts TO listgate_admin;
	END IF;
END
$$;
