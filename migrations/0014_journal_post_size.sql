-- 0014_journal_post_size.sql - the journal's events found by their
-- post's size
--
-- `listgate train --unlearn` asks the journal, for each post, whether
-- it holds a learning of exactly these bytes as the class that no
-- unlearning has undone (journal_learnt): the events of the list and
-- class whose post has the same size are read back and compared.  It
-- asks under the list's journal lock, which moderators' decisions on
-- the list wait for, so it must not read the list's whole journal for
-- each post.
--
-- Applied by `listgate migrate` in one transaction; applied again (its
-- record deleted by hand, as the tests do to replay the migrations
-- after 0010) it makes nothing twice, and asks nothing of a role that
-- does not own the journal (CREATE INDEX IF NOT EXISTS does: "must be
-- owner", where the record's INSERT says what runs migrate).
DO $$
BEGIN
	IF to_regclass('train_journal_post_size') IS NULL THEN
		CREATE INDEX train_journal_post_size ON train_journal
			(list, class, size);
	END IF;
END
$$;
