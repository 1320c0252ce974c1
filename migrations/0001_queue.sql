-- 0001_queue.sql - the moderation queue and the training journal
--
-- Applied by `listgate migrate` in one transaction and recorded in
-- schema_migrations.  Forward-only: a later change is a new file.

-- posts held for moderation (or discarded by the filter), exactly as
-- received: raw_z is the zlib-compressed post, raw_sha256 the SHA-256 of
-- the uncompressed bytes, size their length
CREATE TABLE held_posts (
	id		bigserial PRIMARY KEY,
	list		text NOT NULL
			CHECK (list ~ '^[a-z0-9][a-z0-9._-]*$' AND length(list) <= 64),
	arrived_at	timestamptz NOT NULL DEFAULT now(),
	env_sender	text NOT NULL DEFAULT '',
	env_recipient	text NOT NULL DEFAULT '',
	from_hdr	text NOT NULL DEFAULT '',
	subject		text NOT NULL DEFAULT '',
	message_id	text NOT NULL DEFAULT '',
	size		bigint NOT NULL CHECK (size >= 0),
	score		double precision NOT NULL CHECK (score >= 0 AND score <= 1),
	verdict		text NOT NULL CHECK (verdict IN ('ham', 'unsure', 'spam')),
	clues		text NOT NULL DEFAULT '',
	raw_z		bytea NOT NULL,
	raw_sha256	bytea NOT NULL CHECK (length(raw_sha256) = 32),
	status		text NOT NULL DEFAULT 'held'
			CHECK (status IN ('held', 'approved', 'rejected',
			    'discarded', 'expired')),
	decided_by	text,
	decided_at	timestamptz,
	note		text,
	CHECK ((status = 'held') = (decided_at IS NULL))
);

-- the moderator queries: held posts of a list (or all lists) by age
CREATE INDEX held_posts_queue ON held_posts (status, list, arrived_at);

-- every training event, with the message it trained (compressed); the
-- token files are views of this table, applied in id order by `sync`
CREATE TABLE train_journal (
	id		bigserial PRIMARY KEY,
	list		text NOT NULL
			CHECK (list ~ '^[a-z0-9][a-z0-9._-]*$' AND length(list) <= 64),
	class		text NOT NULL CHECK (class IN ('ham', 'spam')),
	op		text NOT NULL CHECK (op IN ('learn', 'unlearn')),
	source		text NOT NULL
			CHECK (source ~ '^[a-z][a-z0-9_-]*$' AND length(source) <= 32),
	post_id		bigint REFERENCES held_posts (id) ON DELETE SET NULL,
	size		bigint NOT NULL CHECK (size >= 0),
	message_z	bytea NOT NULL,
	created_at	timestamptz NOT NULL DEFAULT now()
);

-- sync reads one list's events after a position
CREATE INDEX train_journal_list ON train_journal (list, id);
CREATE INDEX train_journal_post ON train_journal (post_id)
	WHERE post_id IS NOT NULL;
