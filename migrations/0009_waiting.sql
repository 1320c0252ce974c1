-- 0009_waiting.sql - an index of the posts still waiting for a decision
--
-- A list's queue page, /api/lists/L/held and the held counts all ask for
-- status = 'held' posts of one list in order of arrival.  Once most of a
-- list's posts are decided, the planner (with statistics from when they
-- were held) walked held_posts_arrived and filtered out every decided
-- post on each read: under load the reads slowed as the decisions came.
-- A partial index holds only the waiting posts, in the page's order, and
-- is chosen whatever the statistics say.
--
-- Applied by `listgate migrate` in one transaction.
CREATE INDEX held_posts_waiting ON held_posts (list, arrived_at, id)
	WHERE status = 'held';
