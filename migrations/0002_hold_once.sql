-- 0002_hold_once.sql - a retried post is stored once; approval records
-- a durable "releasing" step before it runs the release command
--
-- Applied by `listgate migrate` in one transaction on top of 0001.

-- 'releasing': an approval committed this state, then ran the list's
-- release command; it becomes 'approved' when that succeeded and the
-- approval was recorded, or goes back to what it was when the command
-- failed.  A post left 'releasing' (the approving process or its
-- connection died in between) may or may not have reached the list:
-- `approve` refuses to release it again unless told (--force), or
-- records it without releasing (--mark-approved).  decided_by and
-- decided_at say who started the release and when.
ALTER TABLE held_posts DROP CONSTRAINT held_posts_status_check;
ALTER TABLE held_posts ADD CONSTRAINT held_posts_status_check
	CHECK (status IN ('held', 'releasing', 'approved', 'rejected',
	    'discarded', 'expired'));

-- The MTA retries a post whose filter was killed after its INSERT
-- committed (watchdog, OOM killer) with exactly the same bytes, while a
-- genuine re-send differs (a new Received line at least).  So a list
-- keeps at most one pending row (held, or being released) per SHA-256,
-- and the retry finds it.  (A post the filter discarded is stored again
-- by a retry: it is never delivered nor trained, so a second row costs
-- only space.)  Rows already held twice by that failure are set aside
-- first: every copy but the oldest becomes 'expired' (nothing trains,
-- nothing is delivered) with a note naming the one kept.
UPDATE held_posts d
   SET status = 'expired',
       decided_by = 'listgate migrate',
       decided_at = now(),
       note = 'the same bytes as post ' || k.first_id ||
	   ' (a retried delivery held twice)'
  FROM (SELECT list, raw_sha256, min(id) AS first_id
	  FROM held_posts
	 WHERE status = 'held'
	 GROUP BY list, raw_sha256
	HAVING count(*) > 1) k
 WHERE d.list = k.list AND d.raw_sha256 = k.raw_sha256
   AND d.id > k.first_id AND d.status = 'held';

-- queue_hold inserts with ON CONFLICT on exactly this predicate
CREATE UNIQUE INDEX held_posts_once ON held_posts (list, raw_sha256)
	WHERE status IN ('held', 'releasing');
