-- 0005_moderation.sql - moderation by mail: the outbox of hold notices
-- and the cookies already used
--
-- Applied by `listgate migrate` in one transaction.  (0003 and 0004 come
-- from other work; 0003 creates the roles listgate_filter,
-- listgate_moderator and listgate_admin, so the grants below are made
-- only where those roles exist.)

-- one row per notice and moderator: written by the filter right after
-- the held row committed, marked when notify's command took it.  A row
-- still 'pending' is retried by `listgate notify --pending`; digest
-- rows (past the list's notify_max_per_hour) wait for that run, which
-- sends each moderator one digest of them.  A notice for a post that is
-- no longer held is 'dropped', never sent.
CREATE TABLE notice_outbox (
	id		bigserial PRIMARY KEY,
	list		text NOT NULL
			CHECK (list ~ '^[a-z0-9][a-z0-9._-]*$' AND length(list) <= 64),
	post_id		bigint NOT NULL REFERENCES held_posts (id) ON DELETE CASCADE,
	moderator	text NOT NULL CHECK (length(moderator) BETWEEN 3 AND 320),
	kind		text NOT NULL CHECK (kind IN ('hold', 'remind')),
	digest		boolean NOT NULL DEFAULT false,
	state		text NOT NULL DEFAULT 'pending'
			CHECK (state IN ('pending', 'sent', 'digest', 'dropped')),
	created_at	timestamptz NOT NULL DEFAULT now(),
	tries		integer NOT NULL DEFAULT 0,
	last_error	text,
	done_at		timestamptz,
	CHECK ((state = 'pending') = (done_at IS NULL))
);
-- a retried delivery of a held post queues its notices once
CREATE UNIQUE INDEX notice_outbox_hold_once ON notice_outbox (post_id, moderator)
	WHERE kind = 'hold';
-- what notify --pending reads, and the hourly count of each list
CREATE INDEX notice_outbox_pending ON notice_outbox (list, id)
	WHERE state = 'pending';
CREATE INDEX notice_outbox_done ON notice_outbox (list, done_at)
	WHERE state = 'sent';

-- each action address works once: its cookie's SHA-256 is kept here
-- from the decision it made (the cookie itself never is)
CREATE TABLE moderation_cookies (
	cookie_sha256	bytea PRIMARY KEY CHECK (length(cookie_sha256) = 32),
	list		text NOT NULL
			CHECK (list ~ '^[a-z0-9][a-z0-9._-]*$' AND length(list) <= 64),
	post_id		bigint REFERENCES held_posts (id) ON DELETE SET NULL,
	action		text NOT NULL CHECK (action IN ('approve', 'reject', 'discard')),
	used_by		text NOT NULL DEFAULT '',
	used_at		timestamptz NOT NULL DEFAULT now()
);

-- the filter queues and marks notices; moderators (listgate moderate,
-- notify --pending) send, drop and use cookies; the administrator owns
-- it all
DO $$
BEGIN
	IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'listgate_filter') THEN
		GRANT SELECT, INSERT, UPDATE ON notice_outbox TO listgate_filter;
		GRANT USAGE ON SEQUENCE notice_outbox_id_seq TO listgate_filter;
	END IF;
	IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'listgate_moderator') THEN
		GRANT SELECT, INSERT, UPDATE ON notice_outbox TO listgate_moderator;
		GRANT USAGE ON SEQUENCE notice_outbox_id_seq TO listgate_moderator;
		GRANT SELECT, INSERT ON moderation_cookies TO listgate_moderator;
	END IF;
	IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'listgate_admin') THEN
		GRANT ALL ON notice_outbox, moderation_cookies TO listgate_admin;
		GRANT ALL ON SEQUENCE notice_outbox_id_seq TO listgate_admin;
		-- owned by the administrator like the tables of 0001-0003
		-- (the role that migrates is its member since 0003)
		IF pg_has_role(current_user, 'listgate_admin', 'MEMBER') THEN
			ALTER TABLE notice_outbox OWNER TO listgate_admin;
			ALTER TABLE moderation_cookies OWNER TO listgate_admin;
		END IF;
	END IF;
END
$$;
