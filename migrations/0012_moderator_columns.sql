-- 0012_moderator_columns.sql - a moderator decides a held post, and
-- changes nothing else of it
--
-- 0003 gave listgate_moderator UPDATE on the whole of held_posts, where
-- a decision only writes its status, decided_by, decided_at and note
-- (and expire's reminder reminded_at, 0006).  With the rest a
-- moderator's login role could rewrite a held post before approving
-- it: its stored bytes (raw_z, released to the list and journaled as
-- ham under the sender's envelope address), its list (a post moved to
-- a list whose moderators never saw it), its sender, score or
-- SHA-256.  Those columns are the filter's, written once by its
-- INSERT.  Now the role may update the decision's columns only.
--
-- Applied by `listgate migrate` in one transaction; only where the
-- role of 0003 exists.
DO $$
BEGIN
	IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'listgate_moderator') THEN
		REVOKE UPDATE ON held_posts FROM listgate_moderator;
		GRANT UPDATE (status, decided_by, decided_at, note, reminded_at)
		    ON held_posts TO listgate_moderator;
	END IF;
END
$$;
