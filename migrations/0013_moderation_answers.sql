-- 0013_moderation_answers.sql - the answers `listgate moderate` sent to
-- replies that decided nothing, counted per address
--
-- A moderator's auto-responder that marks its mail no way robot.c knows
-- (no Auto-Submitted, no Precedence, a Subject "Re: ...") answers each
-- answer of listgate's, which comes from the bare moderation address;
-- listgate refuses that reply ("nothing decided") and answers it, and
-- so on for ever.  A replay of a used action address from any envelope
-- sender has an answer sent to the moderator whose notice it was, as
-- often as it is sent.  Each answer to a reply that decided nothing is
-- counted here, and past LG_MAX_REFUSAL_ANSWERS in an hour its address
-- gets no more (moddb_answer_take); rows older than an hour are
-- deleted by the next answer counted.
--
-- Applied by `listgate migrate` in one transaction; applied again (its
-- record deleted by hand, as the tests do to replay the migrations
-- after 0010) it makes nothing twice.
CREATE TABLE IF NOT EXISTS moderation_answers (
	id		bigserial PRIMARY KEY,
	address		text NOT NULL CHECK (length(address) BETWEEN 3 AND 320),
	list		text NOT NULL
			CHECK (list ~ '^[a-z0-9][a-z0-9._-]*$' AND length(list) <= 64),
	sent_at		timestamptz NOT NULL DEFAULT now()
);
-- the count of one address's last hour (addresses in any case)
CREATE INDEX IF NOT EXISTS moderation_answers_address ON moderation_answers
	(lower(address), sent_at);
-- the rows past the hour, deleted
CREATE INDEX IF NOT EXISTS moderation_answers_sent ON moderation_answers (sent_at);

DO $$
BEGIN
	IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'listgate_moderator') THEN
		GRANT SELECT, INSERT, DELETE ON moderation_answers TO listgate_moderator;
		GRANT USAGE ON SEQUENCE moderation_answers_id_seq TO listgate_moderator;
	END IF;
	IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'listgate_admin') THEN
		GRANT ALL ON moderation_answers TO listgate_admin;
		GRANT ALL ON SEQUENCE moderation_answers_id_seq TO listgate_admin;
		IF pg_has_role(current_user, 'listgate_admin', 'MEMBER') THEN
			ALTER TABLE moderation_answers OWNER TO listgate_admin;
		END IF;
	END IF;
END
$$;
