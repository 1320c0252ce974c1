-- 0010_discard_once.sql - a post the filter discarded is stored once
--
-- A post past its list's discard_cutoff is stored with status
-- 'discarded' (never delivered, never trained), and until now every
-- delivery of the same bytes stored another copy.  Two filters can
-- store the same bytes at once: with a holder that answers late, the
-- filter gives up waiting and stores the post itself while the holder
-- is still storing it; the MTA retries a post whose filter was killed
-- after its INSERT committed.  Each copy counted again in `listgate
-- stats`.  A unique index now keeps one row per list and SHA-256 among
-- the posts the filter discarded; queue_hold inserts with ON CONFLICT DO
-- NOTHING and answers a second delivery with the row already there
-- ("already-discarded").  A moderator's decision on a post sets
-- decided_by to the moderator, so the index never refuses one (and no
-- moderator may decide under the filter's name).  To find that row the
-- filter's role reads decided_by too.
--
-- Copies already stored twice go first: every copy but the oldest is
-- deleted.  They are the same list and the same bytes as the copy kept
-- (their arrival time, envelope, score and clues may differ).  Nothing references a
-- discarded post but a hold notice (never sent for one) and a journal
-- event (none for a post the filter discarded).
--
-- Applied by `listgate migrate` in one transaction.
DELETE FROM held_posts d
 USING (SELECT list, raw_sha256, min(id) AS first_id
	  FROM held_posts
	 WHERE status = 'discarded' AND decided_by = 'listgate filter'
	 GROUP BY list, raw_sha256
	HAVING count(*) > 1) k
 WHERE d.list = k.list AND d.raw_sha256 = k.raw_sha256
   AND d.id > k.first_id AND d.status = 'discarded'
   AND d.decided_by = 'listgate filter';

CREATE UNIQUE INDEX held_posts_discarded_once ON held_posts (list, raw_sha256)
	WHERE status = 'discarded' AND decided_by = 'listgate filter';

DO $$
BEGIN
	IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'listgate_filter') THEN
		GRANT SELECT (decided_by) ON held_posts TO listgate_filter;
	END IF;
END
$$;
