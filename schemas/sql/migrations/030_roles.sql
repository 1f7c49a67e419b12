-- 030: least privilege: a database role per program.
--
-- Until now every program connected as the role that owns the tables.
-- The dashboard faces the network, the builder runs branches' CMake (in a
-- sandbox), the coordinator faces every worker: whichever of them goes
-- wrong could drop tables, rewrite results, sign builds or change a
-- password.  Each now connects as a login role that is a member of one of
-- these group roles (NOLOGIN, made here when the migrating role may
-- create roles, else by an administrator: docs/cluster.md, "Database roles"):
--
--   xqf_coordinator  plays the runs: reads them, writes tasks, results,
--                    games, workers, audits; no accounts, no signatures,
--                    cannot create, approve or stop runs
--   xqf_web          reads what the dashboard shows; writes only through
--                    the SECURITY DEFINER functions below (create, approve,
--                    stop, modify, purge a run; add an account; sessions;
--                    the audit), no INSERT, UPDATE or DELETE of its own
--   xqf_builder      claims build requests, registers builds and their
--                    bytes; cannot sign them or change a run but through
--                    xqf_build_claim and xqf_build_done
--   xqf_signer       reads the builds to sign; signs through
--                    xqf_build_signed only
--
-- The owner (whoever applies the migrations) keeps everything, and so do
-- the operators' tools that connect as it (xqf-tune).  What each role may
-- do is one table, role_grants, applied by xqf_apply_grants(): every
-- privilege of these roles in this schema revoked, then the table's
-- granted, so that the table is the whole truth and applying it again
-- changes nothing.  The store calls it after every migration run by the
-- owner (xqf-coordinator --migrate): roles made by an administrator after
-- this migration get their privileges then.  A later migration that adds
-- a table or a function a role uses adds its rows here; one that replaces
-- a SECURITY DEFINER function says SECURITY DEFINER again (CREATE OR
-- REPLACE resets it) and ends with SELECT xqf_apply_grants().
--
-- SECURITY DEFINER functions run as their owner: as PostgreSQL's manual
-- advises ("Writing SECURITY DEFINER Functions Safely"), each gets a fixed
-- search_path (the tables' schema, then pg_temp last, so that nobody's
-- temporary table or function can stand in for ours) and is not
-- executable by PUBLIC, only by the roles granted it.  xqf_apply_grants
-- does both for every such function of the schema, and takes CREATE on
-- the schema from PUBLIC where the owner may (PostgreSQL 15 does by
-- default; older releases grant it).

-- ---- a signature covers the SHA-256 and the name --------------------------
--
-- Registering a build (store_add_build) no longer writes its signature in
-- the same statement (the builder may register builds but not sign them:
-- it has no privilege on the column); signing is a statement of its own.
-- A build registered again under another name loses a signature made for
-- the old name, whoever registers it.
CREATE FUNCTION xqf_build_renamed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.build_id IS DISTINCT FROM OLD.build_id AND NEW.signature IS NOT DISTINCT FROM OLD.signature THEN
        NEW.signature := NULL;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER engine_builds_renamed BEFORE UPDATE OF build_id ON engine_builds
    FOR EACH ROW EXECUTE FUNCTION xqf_build_renamed();

-- ---- what the dashboard writes ------------------------------------------
--
-- The store issues the same calls for every program (xqf-tune, as the
-- owner, calls them too): one path for a run's creation and changes.

-- A run (the store's create_run, same parameters in the same order);
-- its owner and pending state from the session's xqf.owner and
-- xqf.pending (runs_web_insert, 011); no replay audit for a run of several
-- threads (Lazy SMP's games do not replay, 029).  Returns its id.
CREATE FUNCTION xqf_create_run(p_name text, p_params0 text, p_params1 text, p_build_id text, p_book_name text,
                               p_book text[], p_seed bigint, p_nodes bigint, p_base_ms bigint, p_inc_ms bigint,
                               p_margin_ms bigint, p_hash_mb integer, p_resign_moves bigint, p_resign_score bigint,
                               p_draw_after bigint, p_draw_moves bigint, p_draw_score bigint, p_max_plies bigint,
                               p_pairs_per_task integer, p_max_pairs bigint, p_elo0 double precision,
                               p_elo1 double precision, p_alpha double precision, p_beta double precision,
                               p_priority integer, p_kind text, p_name0 text, p_name1 text, p_settings jsonb,
                               p_test_build bigint, p_base_build bigint, p_tasks_on_claim boolean,
                               p_test_net bigint, p_base_net bigint, p_threads integer)
RETURNS bigint LANGUAGE sql SECURITY DEFINER AS $$
    INSERT INTO runs (kind, name, name0, params0, name1, params1, build_id, book_name, book, seed, nodes, base_ms,
                      inc_ms, margin_ms, hash_mb, resign_moves, resign_score, draw_after, draw_moves, draw_score,
                      max_plies, pairs_per_task, max_pairs, elo0, elo1, alpha, beta, priority, settings,
                      test_build, base_build, tasks_on_claim, test_net, base_net, test_hce, base_hce, threads,
                      replay_share)
    VALUES (p_kind, p_name, p_name0, p_params0, p_name1, p_params1, p_build_id, p_book_name, p_book, p_seed,
            p_nodes, p_base_ms, p_inc_ms, p_margin_ms, p_hash_mb, p_resign_moves, p_resign_score, p_draw_after,
            p_draw_moves, p_draw_score, p_max_plies, p_pairs_per_task, p_max_pairs, p_elo0, p_elo1, p_alpha,
            p_beta, p_priority, p_settings, nullif(p_test_build, 0), nullif(p_base_build, 0), p_tasks_on_claim,
            nullif(greatest(p_test_net, 0), 0), nullif(greatest(p_base_net, 0), 0), p_test_net < 0,
            p_base_net < 0, p_threads, CASE WHEN p_threads > 1 THEN 0 ELSE 0.01 END)
    RETURNING id
$$;

-- The tuned parameters of an SPSA run just created, in order (theta
-- starts at start): only for an SPSA run that has none yet and has not
-- started, so that nobody changes what a run tunes once it runs.  Returns
-- how many were added (0: refused).
CREATE FUNCTION xqf_create_spsa_params(p_run bigint, p_names text[], p_start double precision[],
                                       p_min double precision[], p_max double precision[],
                                       p_c_end double precision[], p_r_end double precision[])
RETURNS integer LANGUAGE sql SECURITY DEFINER AS $$
    WITH added AS (
        INSERT INTO run_params (run_id, idx, name, start, min, max, c_end, r_end, theta)
        SELECT r.id, u.i - 1, u.name, u.start, u.lo, u.hi, u.c_end, u.r_end, u.start
          FROM runs r, unnest(p_names, p_start, p_min, p_max, p_c_end, p_r_end)
                       WITH ORDINALITY AS u (name, start, lo, hi, c_end, r_end, i)
         WHERE r.id = p_run AND r.kind = 'spsa' AND r.next_pair = 0 AND r.iter = 0
           AND NOT EXISTS (SELECT 1 FROM run_params p WHERE p.run_id = p_run)
        RETURNING 1)
    SELECT count(*)::integer FROM added
$$;

-- A run stopped by someone (p_verdict "stopped by NAME"): one waiting for
-- approval or builds at once, an active one through xqf_finish_run (its
-- open tasks cancelled).  Returns false when it had ended already.
CREATE FUNCTION xqf_stop_run(p_run bigint, p_verdict text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    UPDATE runs SET state = 'stopped', verdict = p_verdict, finished_at = now()
     WHERE id = p_run AND state IN ('pending', 'building');
    IF FOUND THEN
        RETURN true;
    END IF;
    RETURN xqf_finish_run(p_run, 'stopped', p_verdict, NULL);
END $$;

-- The dashboard's modify action: priority, pair cap and pairs per task of
-- a run that has not ended.  Returns 1, or 0 when it has.
CREATE FUNCTION xqf_set_run_limits(p_run bigint, p_priority integer, p_max_pairs bigint, p_pairs_per_task integer)
RETURNS integer LANGUAGE sql SECURITY DEFINER AS $$
    WITH u AS (
        UPDATE runs SET priority = p_priority, max_pairs = p_max_pairs, pairs_per_task = p_pairs_per_task
         WHERE id = p_run AND state IN ('active', 'pending', 'building')
        RETURNING 1)
    SELECT count(*)::integer FROM u
$$;

-- The end of a purge (xqf_purge_worker took the worker's results out; the
-- LLR was computed again from what is left): the LLR stored, the run
-- active again when p_reopen, the purge in the run's history.
CREATE FUNCTION xqf_purge_done(p_run bigint, p_llr double precision, p_reopen boolean, p_actor text, p_detail text)
RETURNS void LANGUAGE sql SECURITY DEFINER AS $$
    UPDATE runs SET llr = p_llr, state = CASE WHEN p_reopen THEN 'active' ELSE state END,
                    verdict = CASE WHEN p_reopen THEN NULL ELSE verdict END,
                    finished_at = CASE WHEN p_reopen THEN NULL ELSE finished_at END
     WHERE id = p_run;
    INSERT INTO web_audit (actor, run_id, action, detail) VALUES (p_actor, p_run, 'purge', p_detail);
$$;

-- A new account (an admin's form): never replaces one, so that the
-- dashboard cannot change anyone's password (xqf-tune user add --replace,
-- as the owner, can).  Returns false when the name is taken.
CREATE FUNCTION xqf_user_add(p_name text, p_role text, p_pwhash text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    INSERT INTO web_users (name, role, pwhash) VALUES (p_name, p_role, p_pwhash) ON CONFLICT (name) DO NOTHING;
    RETURN FOUND;
END $$;

-- A session signed in (the token's hash, its CSRF token, its lifetime).
CREATE FUNCTION xqf_session_add(p_token_hash text, p_user bigint, p_csrf text, p_ttl_s bigint) RETURNS void
LANGUAGE sql SECURITY DEFINER AS $$
    INSERT INTO web_sessions (token_hash, user_id, csrf, expires_at)
    VALUES (p_token_hash, p_user, p_csrf, now() + p_ttl_s * interval '1 second')
$$;

-- A session signed out, and the expired ones with it.
CREATE FUNCTION xqf_session_end(p_token_hash text) RETURNS void
LANGUAGE sql SECURITY DEFINER AS $$
    DELETE FROM web_sessions WHERE token_hash = p_token_hash OR expires_at < now()
$$;

-- One line of the audit (run 0: none).
CREATE FUNCTION xqf_audit(p_actor text, p_run bigint, p_action text, p_detail text) RETURNS void
LANGUAGE sql SECURITY DEFINER AS $$
    INSERT INTO web_audit (actor, run_id, action, detail) VALUES (p_actor, nullif(p_run, 0), p_action, p_detail)
$$;

-- Functions of earlier migrations that the dashboard, the builder or the
-- signer call, now run as the owner: their callers need no privilege on
-- the tables they change.  The chain's triggers run as the owner too, so
-- that whoever ends a run (the coordinator, a stop on the dashboard)
-- starts the chain's next stage without the right to create runs.
ALTER FUNCTION xqf_await_builds(bigint, text, text) SECURITY DEFINER;
ALTER FUNCTION xqf_approve(bigint) SECURITY DEFINER;
ALTER FUNCTION xqf_modify_run(bigint, text, integer, integer, bigint, bigint) SECURITY DEFINER;
ALTER FUNCTION xqf_purge_worker(bigint, bigint) SECURITY DEFINER;
ALTER FUNCTION xqf_build_claim(text, integer) SECURITY DEFINER;
ALTER FUNCTION xqf_build_done(bigint, bigint, text) SECURITY DEFINER;
ALTER FUNCTION xqf_build_signed(bigint, text, text) SECURITY DEFINER;
ALTER FUNCTION xqf_chain_run_ended() SECURITY DEFINER;
ALTER FUNCTION xqf_chain_theta() SECURITY DEFINER;

-- ---- the roles and what each may do -----------------------------------------

-- One row per role and object: privileges as GRANT writes them (with
-- column lists where a role may write only some columns); object a table,
-- a sequence, or a function's name (every function of that name).  A
-- table's INSERT brings USAGE on the sequences of its serial columns.
CREATE TABLE role_grants (
    role       text NOT NULL CHECK (role IN ('xqf_coordinator', 'xqf_web', 'xqf_builder', 'xqf_signer')),
    kind       text NOT NULL CHECK (kind IN ('table', 'sequence', 'function')),
    object     text NOT NULL,
    privileges text NOT NULL,
    PRIMARY KEY (role, kind, object)
);

INSERT INTO role_grants (role, kind, object, privileges) VALUES
    -- every program checks the schema's version at connect
    ('xqf_coordinator', 'table', 'schema_migrations', 'SELECT'),
    ('xqf_web', 'table', 'schema_migrations', 'SELECT'),
    ('xqf_builder', 'table', 'schema_migrations', 'SELECT'),
    ('xqf_signer', 'table', 'schema_migrations', 'SELECT'),

    -- the coordinator: runs' progress, tasks and leases, results, games,
    -- workers and their benches, replay audits; builds and nets read only
    ('xqf_coordinator', 'table', 'runs', 'SELECT, UPDATE'),
    ('xqf_coordinator', 'table', 'run_params', 'SELECT, UPDATE'),
    ('xqf_coordinator', 'table', 'run_param_history', 'SELECT, INSERT'),
    ('xqf_coordinator', 'table', 'run_progress', 'SELECT, INSERT'),
    ('xqf_coordinator', 'table', 'tasks', 'SELECT, INSERT, UPDATE'),
    ('xqf_coordinator', 'table', 'results', 'SELECT, INSERT, UPDATE'),
    ('xqf_coordinator', 'table', 'games', 'SELECT, INSERT'),
    ('xqf_coordinator', 'table', 'game_fens', 'SELECT, INSERT'),
    ('xqf_coordinator', 'table', 'replay_audits', 'SELECT, INSERT, UPDATE'),
    ('xqf_coordinator', 'table', 'workers', 'SELECT, INSERT, UPDATE'),
    ('xqf_coordinator', 'table', 'worker_builds', 'SELECT, INSERT, UPDATE'),
    ('xqf_coordinator', 'table', 'engine_builds', 'SELECT'),
    ('xqf_coordinator', 'table', 'nets', 'SELECT'),
    ('xqf_coordinator', 'sequence', 'lease_tokens', 'USAGE'),

    -- the dashboard: what its pages show (accounts and sessions to sign
    -- in), and its writes through the functions above
    ('xqf_web', 'table', 'runs', 'SELECT'),
    ('xqf_web', 'table', 'run_params', 'SELECT'),
    ('xqf_web', 'table', 'run_param_history', 'SELECT'),
    ('xqf_web', 'table', 'run_progress', 'SELECT'),
    ('xqf_web', 'table', 'tasks', 'SELECT'),
    ('xqf_web', 'table', 'results', 'SELECT'),
    ('xqf_web', 'table', 'games', 'SELECT'),
    ('xqf_web', 'table', 'game_fens', 'SELECT'),
    ('xqf_web', 'table', 'replay_audits', 'SELECT'),
    ('xqf_web', 'table', 'workers', 'SELECT'),
    ('xqf_web', 'table', 'worker_builds', 'SELECT'),
    ('xqf_web', 'table', 'engine_builds', 'SELECT'),
    ('xqf_web', 'table', 'build_params', 'SELECT'),
    ('xqf_web', 'table', 'build_requests', 'SELECT'),
    ('xqf_web', 'table', 'nets', 'SELECT'),
    ('xqf_web', 'table', 'web_users', 'SELECT'),
    ('xqf_web', 'table', 'web_sessions', 'SELECT'),
    ('xqf_web', 'table', 'web_audit', 'SELECT'),
    ('xqf_web', 'function', 'xqf_create_run', 'EXECUTE'),
    ('xqf_web', 'function', 'xqf_create_spsa_params', 'EXECUTE'),
    ('xqf_web', 'function', 'xqf_await_builds', 'EXECUTE'),
    ('xqf_web', 'function', 'xqf_approve', 'EXECUTE'),
    ('xqf_web', 'function', 'xqf_stop_run', 'EXECUTE'),
    ('xqf_web', 'function', 'xqf_set_run_limits', 'EXECUTE'),
    ('xqf_web', 'function', 'xqf_modify_run', 'EXECUTE'),
    ('xqf_web', 'function', 'xqf_purge_worker', 'EXECUTE'),
    ('xqf_web', 'function', 'xqf_purge_done', 'EXECUTE'),
    ('xqf_web', 'function', 'xqf_user_add', 'EXECUTE'),
    ('xqf_web', 'function', 'xqf_session_add', 'EXECUTE'),
    ('xqf_web', 'function', 'xqf_session_end', 'EXECUTE'),
    ('xqf_web', 'function', 'xqf_audit', 'EXECUTE'),

    -- the builder: its requests through their functions, the builds it
    -- registers (never their signature), the sets of the runs it builds for
    ('xqf_builder', 'table', 'runs', 'SELECT'),
    ('xqf_builder', 'table', 'build_requests', 'SELECT'),
    ('xqf_builder', 'table', 'engine_builds',
     'SELECT, INSERT (run_id, params_hash, sha256, build_id, bench_nodes, path, net_id), '
     'UPDATE (run_id, params_hash, build_id, bench_nodes, path, net_id, blob, git_commit, git_tree, git_subject, '
     'params_listed)'),
    ('xqf_builder', 'table', 'build_params', 'SELECT, INSERT, DELETE'),
    ('xqf_builder', 'table', 'worker_builds', 'SELECT, DELETE'),
    ('xqf_builder', 'table', 'nets', 'SELECT'),
    ('xqf_builder', 'function', 'xqf_build_claim', 'EXECUTE'),
    ('xqf_builder', 'function', 'xqf_build_done', 'EXECUTE'),

    -- the signer: the builds waiting for it and their bytes; the signature
    -- through xqf_build_signed, which checks the SHA-256 and starts the runs
    ('xqf_signer', 'table', 'runs', 'SELECT'),
    ('xqf_signer', 'table', 'build_requests', 'SELECT'),
    ('xqf_signer', 'table', 'engine_builds', 'SELECT'),
    ('xqf_signer', 'function', 'xqf_build_signed', 'EXECUTE');

-- Makes the roles of role_grants that are missing (when the current role
-- may create roles; else a warning says who must), pins the search_path
-- of every SECURITY DEFINER function of the tables' schema and takes it
-- from PUBLIC, takes CREATE on the schema from PUBLIC when the current
-- role owns it, then gives each existing role exactly its rows.  Run by
-- the owner only (not executable by anyone else); safe to run again.
CREATE FUNCTION xqf_apply_grants() RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_schema regnamespace := (SELECT relnamespace FROM pg_class WHERE oid = 'runs'::regclass);
    v_may_create boolean := (SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user);
    v_role text;
    v_fn regprocedure;
    v_seq regclass;
    g role_grants%ROWTYPE;
BEGIN
    FOR v_role IN SELECT DISTINCT role FROM role_grants ORDER BY 1 LOOP
        CONTINUE WHEN EXISTS (SELECT 1 FROM pg_roles WHERE rolname = v_role);
        IF v_may_create THEN
            BEGIN
                EXECUTE format('CREATE ROLE %I NOLOGIN', v_role);
            EXCEPTION WHEN duplicate_object OR unique_violation THEN
                NULL;   -- made meanwhile by the migration of another database of the cluster
            END;
        ELSE
            RAISE WARNING 'role % does not exist and % may not create roles: an administrator creates it '
                          '(CREATE ROLE % NOLOGIN), then xqf-coordinator --migrate grants it its privileges',
                          v_role, current_user, v_role;
        END IF;
    END LOOP;

    FOR v_fn IN SELECT p.oid::regprocedure FROM pg_proc p WHERE p.pronamespace = v_schema AND p.prosecdef LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = %s, pg_temp', v_fn, v_schema);
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', v_fn);
    END LOOP;
    REVOKE ALL ON FUNCTION xqf_apply_grants() FROM PUBLIC;

    IF pg_has_role((SELECT nspowner FROM pg_namespace WHERE oid = v_schema), 'MEMBER') THEN
        EXECUTE format('REVOKE CREATE ON SCHEMA %s FROM PUBLIC', v_schema);
    END IF;

    FOR v_role IN SELECT DISTINCT r.role FROM role_grants r JOIN pg_roles p ON p.rolname = r.role ORDER BY 1 LOOP
        EXECUTE format('REVOKE ALL ON ALL TABLES IN SCHEMA %s FROM %I', v_schema, v_role);
        EXECUTE format('REVOKE ALL ON ALL SEQUENCES IN SCHEMA %s FROM %I', v_schema, v_role);
        EXECUTE format('REVOKE ALL ON ALL FUNCTIONS IN SCHEMA %s FROM %I', v_schema, v_role);
        EXECUTE format('GRANT USAGE ON SCHEMA %s TO %I', v_schema, v_role);
        IF has_schema_privilege(v_role, v_schema, 'CREATE') THEN
            RAISE WARNING 'role % may create objects in schema % (through PUBLIC): its owner should '
                          'REVOKE CREATE ON SCHEMA % FROM PUBLIC', v_role, v_schema, v_schema;
        END IF;
    END LOOP;

    FOR g IN SELECT r.* FROM role_grants r JOIN pg_roles p ON p.rolname = r.role ORDER BY r.role, r.kind, r.object LOOP
        IF g.kind = 'function' THEN
            FOR v_fn IN SELECT p.oid::regprocedure FROM pg_proc p
                         WHERE p.pronamespace = v_schema AND p.proname = g.object LOOP
                EXECUTE format('GRANT %s ON FUNCTION %s TO %I', g.privileges, v_fn, g.role);
            END LOOP;
        ELSIF g.kind = 'sequence' THEN
            EXECUTE format('GRANT %s ON SEQUENCE %s.%I TO %I', g.privileges, v_schema, g.object, g.role);
        ELSE
            EXECUTE format('GRANT %s ON TABLE %s.%I TO %I', g.privileges, v_schema, g.object, g.role);
            IF g.privileges ~* '\mINSERT\M' THEN
                FOR v_seq IN SELECT d.objid::regclass FROM pg_depend d JOIN pg_class s ON s.oid = d.objid
                              WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
                                AND d.refobjid = format('%s.%I', v_schema, g.object)::regclass
                                AND s.relkind = 'S' AND d.deptype IN ('a', 'i') LOOP
                    EXECUTE format('GRANT USAGE ON SEQUENCE %s TO %I', v_seq, g.role);
                END LOOP;
            END IF;
        END IF;
    END LOOP;
END $$;

SELECT xqf_apply_grants();
