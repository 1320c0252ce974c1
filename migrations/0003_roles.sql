-- 0003_roles.sql - three group roles split the work: the filter holds
-- posts, moderators decide and journal, the administrator migrates and
-- owns the tables
--
-- Applied by `listgate migrate` in one transaction on top of 0002.
--
-- The roles are NOLOGIN group roles, made only when missing (roles
-- belong to the whole cluster: one set serves every listgate database
-- in it).  Grant them to the login roles that connect:
--
--	GRANT listgate_filter TO postfix_pipe_user;	-- runs filter
--	GRANT listgate_moderator TO alice;		-- held, approve, sync
--	GRANT listgate_admin TO listgate;		-- migrate
--
-- Creating the roles needs a superuser or a role with CREATEROLE, and
-- handing the tables to listgate_admin needs the owner of the schema
-- (the database's owner, for public) or a superuser; a database
-- administrator may create the roles beforehand instead, and make the
-- role that migrates a member of listgate_admin.  Later migrations grant
-- what their own tables need to these roles.
--
--   listgate_filter     holds posts: INSERT into held_posts, and reads
--                       only what holding needs (the schema version; the
--                       id, list, SHA-256 and status of a pending row, to
--                       answer a retried delivery with the row it made)
--   listgate_moderator  lists, shows and decides held posts, journals
--                       training and reads the journal (sync, rebuild)
--   listgate_admin      owns the tables: migrates

-- (A migrate of another database of the cluster may create them in the
-- same moment, unseen until it commits: its role is then a duplicate
-- here, and the role is there all the same.)
DO $$
DECLARE
	r text;
BEGIN
	FOREACH r IN ARRAY ARRAY['listgate_filter', 'listgate_moderator',
	    'listgate_admin'] LOOP
		IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
			BEGIN
				EXECUTE format('CREATE ROLE %I NOLOGIN', r);
			EXCEPTION WHEN duplicate_object OR unique_violation THEN
				NULL;
			END;
		END IF;
	END LOOP;
END
$$;

-- the role that migrates becomes a member of listgate_admin, so that it
-- may hand the tables over (and run later migrations as their owner)
-- (the same role migrating another database in the same moment may
-- have granted it too: a duplicate, and the membership is there)
DO $$
BEGIN
	IF current_setting('server_version_num')::int >= 160000 THEN
		IF NOT pg_has_role(current_user, 'listgate_admin', 'SET') THEN
			BEGIN
				EXECUTE 'GRANT listgate_admin TO CURRENT_USER '
				    'WITH INHERIT TRUE, SET TRUE';
			EXCEPTION WHEN unique_violation THEN
				NULL;
			END;
		END IF;
	ELSIF NOT pg_has_role(current_user, 'listgate_admin', 'MEMBER') THEN
		BEGIN
			GRANT listgate_admin TO CURRENT_USER;
		EXCEPTION WHEN unique_violation THEN
			NULL;
		END;
	END IF;
END
$$;

-- the schema of the tables: every role uses it, the owner of the tables
-- may create in it (PostgreSQL wants that of a new owner, and later
-- migrations create tables).  Granting needs the schema's owner (the
-- database's owner for public since PostgreSQL 15) or a superuser.
DO $$
BEGIN
	EXECUTE format('GRANT USAGE ON SCHEMA %I TO listgate_filter, '
	    'listgate_moderator', current_schema());
	EXECUTE format('GRANT USAGE, CREATE ON SCHEMA %I TO listgate_admin',
	    current_schema());
END
$$;

-- listgate_admin owns everything (the sequences follow their tables)
ALTER TABLE schema_migrations OWNER TO listgate_admin;
ALTER TABLE held_posts OWNER TO listgate_admin;
ALTER TABLE train_journal OWNER TO listgate_admin;

-- every role runs the schema check before it works
GRANT SELECT ON schema_migrations TO listgate_filter, listgate_moderator;

-- the filter: hold (queue_hold: INSERT ... ON CONFLICT DO NOTHING
-- RETURNING id, then the pending row's id by list and SHA-256)
GRANT INSERT ON held_posts TO listgate_filter;
GRANT SELECT (id, list, raw_sha256, status) ON held_posts TO listgate_filter;
GRANT USAGE ON SEQUENCE held_posts_id_seq TO listgate_filter;

-- moderators: held, show, approve, reject, discard, expire (SELECT ...
-- FOR UPDATE, UPDATE), training events (INSERT), sync and rebuild
-- (SELECT from the journal)
GRANT SELECT, UPDATE ON held_posts TO listgate_moderator;
GRANT SELECT, INSERT ON train_journal TO listgate_moderator;
GRANT USAGE ON SEQUENCE train_journal_id_seq TO listgate_moderator;
