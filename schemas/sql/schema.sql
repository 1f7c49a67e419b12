-- The schema of the xqf database as the migrations leave it, made by
-- ops/schema --write from schemas/sql/migrations/ and schemas/sql/functions/
-- (never edited by hand; ctest `schema` checks it).
--
-- PostgreSQL database dump
--



SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: xqf_add(bigint[], bigint[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_add(a bigint[], b bigint[]) RETURNS bigint[]
    LANGUAGE plpgsql IMMUTABLE
    AS $$
DECLARE
    n integer := greatest(coalesce(array_length(a, 1), 0), coalesce(array_length(b, 1), 0));
    out bigint[] := '{}';
BEGIN
    FOR i IN 1 .. n LOOP
        out[i] := coalesce(a[i], 0) + coalesce(b[i], 0);
    END LOOP;
    RETURN out;
END $$;


--
-- Name: xqf_apply_grants(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_apply_grants() RETURNS void
    LANGUAGE plpgsql
    AS $$
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


--
-- Name: xqf_approve(bigint, text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_approve(p_run bigint, p_test_commit text, p_base_commit text) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    v_state text;
BEGIN
    UPDATE runs SET state = CASE WHEN EXISTS (SELECT 1 FROM build_requests q
                                               WHERE q.run_id = runs.id AND q.state IN ('queued', 'building'))
                                 THEN 'building' ELSE 'active' END
     WHERE id = p_run AND state = 'pending'
       AND NOT EXISTS (SELECT 1 FROM build_requests q
                        WHERE q.run_id = p_run AND q.state IN ('queued', 'building')
                          AND (q.git_commit IS NULL
                               OR q.git_commit IS DISTINCT FROM CASE q.side WHEN 'test' THEN p_test_commit
                                                                            ELSE p_base_commit END))
    RETURNING state INTO v_state;
    RETURN v_state;
END $$;


--
-- Name: xqf_artifact_due(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_artifact_due(p_sha text) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
    SELECT EXISTS (
        SELECT 1
          FROM runs r
         WHERE (r.test_build IN (SELECT b.id FROM engine_builds b WHERE b.sha256 = p_sha)
                OR r.base_build IN (SELECT b.id FROM engine_builds b WHERE b.sha256 = p_sha)
                OR r.test_net IN (SELECT n.id FROM nets n WHERE n.sha256 = p_sha)
                OR r.base_net IN (SELECT n.id FROM nets n WHERE n.sha256 = p_sha))
           AND (r.state = 'active'
                OR (r.state = 'finished'
                    AND EXISTS (SELECT 1 FROM replay_audits a
                                 WHERE a.run_id = r.id
                                   AND (a.state IN ('pending', 'leased') OR a.arbiter IN ('pending', 'leased'))))))
$$;


--
-- Name: xqf_audit(text, bigint, text, text, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_audit(p_actor text, p_run bigint, p_action text, p_detail text, p_chain bigint DEFAULT NULL::bigint) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    INSERT INTO web_audit (actor, run_id, action, detail, chain_id)
    VALUES (p_actor, nullif(p_run, 0), p_action, p_detail, nullif(p_chain, 0))
$$;


--
-- Name: xqf_audit_handback(bigint, bigint, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_audit_handback(p_audit bigint, p_token bigint, p_worker bigint) RETURNS text
    LANGUAGE sql
    AS $$
    WITH a AS (
        UPDATE replay_audits
           SET state = CASE WHEN arbiter IS NULL THEN 'pending' ELSE state END,
               second_worker = CASE WHEN arbiter IS NULL THEN NULL ELSE second_worker END,
               arbiter = CASE WHEN arbiter IS NULL THEN NULL ELSE 'pending' END,
               third_worker = NULL, lease_token = NULL, lease_deadline = NULL
         WHERE id = p_audit AND xqf_audit_held(replay_audits, p_token, p_worker)
        RETURNING id)
    SELECT CASE WHEN EXISTS (SELECT 1 FROM a) THEN 'ok' ELSE 'stale' END
$$;


--
-- Name: xqf_audit_heartbeat(bigint, bigint, bigint, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_audit_heartbeat(p_audit bigint, p_token bigint, p_worker bigint, p_lease_ms bigint) RETURNS text
    LANGUAGE sql
    AS $$
    WITH a AS (
        UPDATE replay_audits SET lease_deadline = now() + p_lease_ms * interval '1 millisecond'
         WHERE id = p_audit AND xqf_audit_held(replay_audits, p_token, p_worker)
        RETURNING id)
    SELECT CASE WHEN EXISTS (SELECT 1 FROM a) THEN 'ok' ELSE 'stale' END
$$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: replay_audits; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.replay_audits (
    id bigint NOT NULL,
    run_id bigint NOT NULL,
    pair bigint NOT NULL,
    task_id bigint NOT NULL,
    first_worker integer NOT NULL,
    second_worker integer,
    state text DEFAULT 'pending'::text NOT NULL,
    lease_token bigint,
    lease_deadline timestamp with time zone,
    detail text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    replay bytea[],
    third_worker integer,
    arbiter text,
    CONSTRAINT replay_audits_arbiter_check CHECK ((arbiter = ANY (ARRAY['pending'::text, 'leased'::text, 'original'::text, 'auditor'::text, 'neither'::text]))),
    CONSTRAINT replay_audits_state_check CHECK ((state = ANY (ARRAY['pending'::text, 'leased'::text, 'agree'::text, 'mismatch'::text, 'auditor_lied'::text])))
);


--
-- Name: xqf_audit_held(public.replay_audits, bigint, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_audit_held(a public.replay_audits, p_token bigint, p_worker bigint) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT coalesce(a.lease_token = p_token AND ((a.state = 'leased' AND a.second_worker = p_worker)
                                                 OR (a.arbiter = 'leased' AND a.third_worker = p_worker)), false)
$$;


--
-- Name: xqf_audit_report(bigint, bigint, bigint, bytea, integer[], integer[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_audit_report(p_audit bigint, p_token bigint, p_worker bigint, p_records bytea, p_off integer[], p_len integer[]) RETURNS text
    LANGUAGE plpgsql
    AS $_$
DECLARE
    a replay_audits%ROWTYPE;
    differs text;
    as_auditor boolean;
    v text;
BEGIN
    SELECT * INTO a FROM replay_audits WHERE id = p_audit FOR UPDATE;
    IF NOT FOUND OR NOT xqf_audit_held(a, p_token, p_worker) THEN
        RETURN 'stale';
    END IF;
    IF coalesce(array_length(p_off, 1), 0) <> 2 THEN
        RETURN 'invalid';
    END IF;
    -- The two stored games planned at each call (EXECUTE, as xqf_games_batch):
    -- a plan kept from a young run reads them by the run alone, so every
    -- game of the run.  $1 the run, $2 the pair, $3 the replay kept, $4
    -- p_records, $5 p_off, $6 p_len.
    EXECUTE $q$
    SELECT string_agg(CASE WHEN g.record IS DISTINCT FROM xqf_game_bare(u.rec) OR f.fen IS DISTINCT FROM xqf_game_fen(u.rec)
                           THEN 'game ' || (2 * $2 + u.i - 1)::text END, ', ' ORDER BY u.i),
           bool_and(xqf_game_bare($3[u.i]) = xqf_game_bare(u.rec)
                    AND xqf_game_fen($3[u.i]) = xqf_game_fen(u.rec))
      FROM (SELECT substring($4 FROM x.off + 1 FOR x.len) AS rec, x.i
              FROM unnest($5::integer[], $6::integer[]) WITH ORDINALITY AS x(off, len, i)) AS u
      -- each stored game by its key: a lateral lookup (OFFSET 0 keeps it one),
      -- never a scan of the run's games kept for two (a plan made from
      -- statistics taken before the run had games thinks it holds one)
      LEFT JOIN LATERAL (SELECT s.record, s.fen_id FROM games s
                          WHERE s.run_id = $1 AND s.game = 2 * $2 + u.i - 1 OFFSET 0) g ON true
      LEFT JOIN game_fens f ON f.id = g.fen_id
    $q$ INTO differs, as_auditor USING a.run_id, a.pair, a.replay, p_records, p_off, p_len;
    IF a.state = 'leased' THEN
        UPDATE replay_audits SET state = CASE WHEN differs IS NULL THEN 'agree' ELSE 'mismatch' END,
                                 detail = coalesce(differs || ' differ', ''), finished_at = now(),
                                 lease_token = NULL, lease_deadline = NULL,
                                 replay = CASE WHEN differs IS NOT NULL THEN
                                     ARRAY(SELECT substring(p_records FROM x.off + 1 FOR x.len)
                                             FROM unnest(p_off, p_len) WITH ORDINALITY AS x(off, len, i) ORDER BY x.i)
                                 END,
                                 arbiter = CASE WHEN differs IS NOT NULL THEN 'pending' END
         WHERE id = p_audit;
        RETURN CASE WHEN differs IS NULL THEN 'agree' ELSE 'mismatch' END;
    END IF;
    v := CASE WHEN differs IS NULL THEN 'original' WHEN as_auditor THEN 'auditor' ELSE 'neither' END;
    UPDATE replay_audits SET state = CASE WHEN v = 'original' THEN 'auditor_lied' ELSE state END,
                             arbiter = v, lease_token = NULL, lease_deadline = NULL, finished_at = now(),
                             detail = detail || CASE v WHEN 'original' THEN '; a third key replays the pair''s records'
                                                       WHEN 'auditor' THEN '; a third key replays the auditor''s'
                                                       ELSE '; a third key replays neither' END
     WHERE id = p_audit;
    RETURN CASE WHEN v = 'original' THEN 'agree' ELSE 'mismatch' END;
END $_$;


--
-- Name: xqf_await_builds(bigint, text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_await_builds(p_run bigint, p_test_ref text, p_base_ref text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    IF p_test_ref IS NULL AND p_base_ref IS NULL THEN
        RETURN false;
    END IF;
    UPDATE runs SET built_state = 'active', state = CASE WHEN state = 'pending' THEN 'pending' ELSE 'building' END
     WHERE id = p_run AND state IN ('active', 'pending') AND next_pair = 0;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    INSERT INTO build_requests (run_id, side, ref)
    SELECT p_run, side, ref FROM (VALUES ('test', p_test_ref), ('base', p_base_ref)) v (side, ref)
     WHERE ref IS NOT NULL;
    RETURN true;
END $$;


--
-- Name: xqf_build_claim(text, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_build_claim(p_builder text, p_lease_s integer) RETURNS TABLE(id bigint, run_id bigint, side text, ref text, git_commit text, git_subject text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    UPDATE build_requests q SET state = 'failed', finished_at = now(),
                                error = format('not built: the run was %s first', r.state)
      FROM runs r
     WHERE r.id = q.run_id AND q.state = 'queued' AND r.state NOT IN ('building', 'pending');
    RETURN QUERY
    UPDATE build_requests q SET state = 'building', started_at = now(), builder = p_builder
     WHERE q.id = (SELECT c.id FROM build_requests c JOIN runs r ON r.id = c.run_id
                    WHERE r.state = 'building' AND c.git_commit IS NOT NULL
                      AND (c.state = 'queued'
                           OR (c.state = 'building' AND c.started_at < now() - p_lease_s * interval '1 second'))
                    ORDER BY c.id LIMIT 1 FOR UPDATE OF c SKIP LOCKED)
    RETURNING q.id, q.run_id, q.side, q.ref, q.git_commit, q.git_subject;
END $$;


--
-- Name: xqf_build_done(bigint, bigint, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_build_done(p_request bigint, p_build bigint, p_error text) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    q build_requests%ROWTYPE;
    r runs%ROWTYPE;
    v_test bigint;
    v_base bigint;
BEGIN
    SELECT runs.* INTO r FROM runs JOIN build_requests b ON b.run_id = runs.id
     WHERE b.id = p_request FOR UPDATE OF runs;
    SELECT * INTO q FROM build_requests WHERE build_requests.id = p_request AND state = 'building' FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    UPDATE build_requests SET state = CASE WHEN p_build IS NULL THEN 'failed' ELSE 'done' END,
                              build_id = p_build, error = coalesce(p_error, ''), finished_at = now()
     WHERE build_requests.id = p_request;
    INSERT INTO web_audit (actor, run_id, action, detail)
    VALUES (coalesce(nullif(q.builder, ''), 'builder'), q.run_id,
            CASE WHEN p_build IS NULL THEN 'build failed' ELSE 'build' END,
            CASE WHEN p_build IS NULL THEN format('%s ref %s: %s', q.side, q.ref, left(coalesce(p_error, ''), 200))
                 ELSE format('%s ref %s: build %s', q.side, q.ref, p_build) END);
    IF r.state <> 'building' THEN
        RETURN r.state;
    END IF;
    IF p_build IS NULL THEN
        UPDATE build_requests SET state = 'failed', finished_at = now(),
                                  error = format('not built: the %s side failed', q.side)
         WHERE build_requests.run_id = r.id AND state IN ('queued', 'building');
        UPDATE runs SET state = 'failed', finished_at = now(),
                        verdict = left(format('build of %s ref %s failed', q.side, q.ref), 63)
         WHERE runs.id = r.id;
        RETURN 'failed';
    END IF;
    IF EXISTS (SELECT 1 FROM build_requests WHERE build_requests.run_id = r.id AND state <> 'done') THEN
        RETURN 'building';
    END IF;
    SELECT coalesce((SELECT build_id FROM build_requests WHERE build_requests.run_id = r.id AND side = 'test'), r.test_build),
           coalesce((SELECT build_id FROM build_requests WHERE build_requests.run_id = r.id AND side = 'base'), r.base_build)
      INTO v_test, v_base;
    IF r.kind = 'spsa' THEN
        -- an SPSA run's one build plays both sides: theta + c_k flip against theta - c_k flip
        v_base := v_test;
    ELSIF v_test IS NOT DISTINCT FROM v_base THEN
        UPDATE runs SET state = 'failed', finished_at = now(), test_build = v_test, base_build = v_base,
                        verdict = 'test and base are the same build'
         WHERE runs.id = r.id;
        RETURN 'failed';
    END IF;
    UPDATE runs SET test_build = v_test, base_build = v_base WHERE runs.id = r.id;
    RETURN xqf_builds_ready(r.id);
END $$;


--
-- Name: xqf_build_pin(bigint, text, text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_build_pin(p_request bigint, p_commit text, p_subject text, p_error text) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    q build_requests%ROWTYPE;
    r runs%ROWTYPE;
    v_error text;
    v_verdict text;
BEGIN
    -- the run first, then its requests: the order every writer takes them
    SELECT runs.* INTO r FROM runs JOIN build_requests b ON b.run_id = runs.id
     WHERE b.id = p_request FOR UPDATE OF runs;
    SELECT * INTO q FROM build_requests WHERE build_requests.id = p_request AND state IN ('queued', 'building')
       FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF r.state NOT IN ('pending', 'building') THEN
        UPDATE build_requests SET state = 'failed', finished_at = now(),
                                  error = format('not built: the run was %s first', r.state)
         WHERE build_requests.id = p_request;
        RETURN r.state;
    END IF;
    IF q.git_commit IS NULL AND p_commit IS NOT NULL THEN
        UPDATE build_requests SET git_commit = p_commit, git_subject = left(coalesce(p_subject, ''), 512)
         WHERE build_requests.id = p_request;
        RETURN r.state;
    END IF;
    IF q.git_commit = p_commit THEN
        RETURN r.state;
    END IF;
    IF q.git_commit IS NULL THEN
        v_error := coalesce(nullif(p_error, ''), format('the %s ref %s does not resolve', q.side, q.ref));
        v_verdict := left(format('build of %s ref %s failed', q.side, q.ref), 63);
    ELSIF p_commit IS NULL THEN
        -- gone, or its repository unreadable now: either way not the commit approved
        v_error := format('the %s ref %s (commit %s when the test was made) cannot be read now: %s: not built',
                          q.side, q.ref, q.git_commit, coalesce(nullif(p_error, ''), 'unknown ref'));
        v_verdict := left(format('build of %s ref %s failed', q.side, q.ref), 63);
    ELSE
        v_error := format('the %s ref %s moved: the test was made (and approved) at commit %s, the ref now names %s: '
                          'not built (a test of the new commit is a new test)', q.side, q.ref, q.git_commit, p_commit);
        v_verdict := format('%s ref moved: %s approved, now %s', q.side, left(q.git_commit, 12), left(p_commit, 12));
    END IF;
    UPDATE build_requests SET state = 'failed', finished_at = now(), error = v_error
     WHERE build_requests.id = p_request;
    UPDATE build_requests SET state = 'failed', finished_at = now(),
                              error = format('not built: the %s side failed', q.side)
     WHERE build_requests.run_id = r.id AND state IN ('queued', 'building');
    UPDATE runs SET state = 'failed', finished_at = now(), verdict = v_verdict WHERE runs.id = r.id;
    RETURN 'failed';
END $$;


--
-- Name: xqf_build_renamed(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_build_renamed() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.build_id IS DISTINCT FROM OLD.build_id AND NEW.signature IS NOT DISTINCT FROM OLD.signature THEN
        NEW.signature := NULL;
    END IF;
    RETURN NEW;
END $$;


--
-- Name: xqf_build_request_notify(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_build_request_notify() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_notify('xqf_run_progress', NEW.run_id::text);
    RETURN NULL;
END $$;


--
-- Name: xqf_build_signed(bigint, text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_build_signed(p_build bigint, p_sha256 text, p_signature text) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    v_run bigint;
    v_started integer := 0;
BEGIN
    UPDATE engine_builds SET signature = p_signature
     WHERE id = p_build AND signature IS NULL AND sha256 = p_sha256;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    FOR v_run IN SELECT r.id FROM runs r WHERE r.state = 'building' AND p_build IN (r.test_build, r.base_build)
                  ORDER BY r.id LOOP
        IF xqf_builds_ready(v_run) <> 'building' THEN
            v_started := v_started + 1;
        END IF;
    END LOOP;
    RETURN v_started;
END $$;


--
-- Name: xqf_builds_ready(bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_builds_ready(p_run bigint) RETURNS text
    LANGUAGE plpgsql
    AS $$
DECLARE
    r runs%ROWTYPE;
BEGIN
    SELECT * INTO r FROM runs WHERE id = p_run FOR UPDATE;
    IF NOT FOUND OR r.state <> 'building'
       OR EXISTS (SELECT 1 FROM build_requests q WHERE q.run_id = p_run AND q.state <> 'done') THEN
        RETURN r.state;
    END IF;
    IF EXISTS (SELECT 1 FROM engine_builds b WHERE b.id IN (r.test_build, r.base_build) AND b.signature IS NULL) THEN
        RETURN 'building';
    END IF;
    UPDATE runs SET state = r.built_state WHERE id = p_run;
    RETURN r.built_state;
END $$;


--
-- Name: xqf_chain_add(text, bigint, bigint, boolean); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_chain_add(p_name text, p_base_build bigint, p_base_net bigint, p_base_hce boolean) RETURNS bigint
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    INSERT INTO chains (name, base_build, base_net, base_hce)
    SELECT p_name, p_base_build, p_base_net, p_base_hce
     WHERE NOT EXISTS (SELECT 1 FROM nets WHERE id = p_base_net AND NOT approved)
    RETURNING id
$$;


--
-- Name: xqf_chain_add_stage(bigint, integer, text, text, bigint, double precision, double precision, double precision, double precision, bigint, bigint, bigint, bigint, integer, integer, double precision, double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_chain_add_stage(p_chain bigint, p_idx integer, p_kind text, p_state text, p_run bigint, p_elo0 double precision, p_elo1 double precision, p_alpha double precision, p_beta double precision, p_max_pairs bigint, p_nodes bigint, p_base_ms bigint, p_inc_ms bigint, p_epochs integer, p_batch integer, p_lambda double precision, p_lr double precision) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM chains WHERE id = p_chain AND state = 'active')
       OR (SELECT count(*) FROM chain_stages WHERE chain_id = p_chain) <> p_idx
       OR (p_idx = 0) <> (p_run IS NOT NULL)
       OR (p_idx = 0 AND (p_state <> 'running' OR EXISTS (SELECT 1 FROM chain_stages WHERE run_id = p_run)))
       OR (p_idx > 0 AND p_state <> 'waiting') THEN
        RAISE EXCEPTION 'chain %: stage % is not the next of a new chain', p_chain, p_idx USING ERRCODE = '42501';
    END IF;
    INSERT INTO chain_stages (chain_id, idx, kind, state, run_id, elo0, elo1, alpha, beta, max_pairs, nodes, base_ms,
                              inc_ms, epochs, batch, lambda, lr)
    VALUES (p_chain, p_idx, p_kind, p_state, p_run, p_elo0, p_elo1, p_alpha, p_beta, p_max_pairs, p_nodes, p_base_ms,
            p_inc_ms, p_epochs, p_batch, p_lambda, p_lr);
END
$$;


--
-- Name: xqf_chain_built(bigint, bigint, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_chain_built(p_chain bigint, p_build bigint, p_note text) RETURNS boolean
    LANGUAGE sql
    AS $$
    SELECT xqf_chain_done(p_chain, 'build', p_build IS NOT NULL, p_build, NULL, p_note)
$$;


--
-- Name: xqf_chain_done(bigint, text, boolean, bigint, bigint, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_chain_done(p_chain bigint, p_kind text, p_ok boolean, p_build bigint, p_net bigint, p_detail text) RETURNS boolean
    LANGUAGE plpgsql
    AS $$
DECLARE
    st chain_stages%ROWTYPE;
BEGIN
    SELECT s.* INTO st FROM chain_stages s JOIN chains c ON c.id = s.chain_id
     WHERE s.chain_id = p_chain AND s.kind = p_kind AND s.state = 'running' AND c.state = 'active'
     FOR UPDATE OF c;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    UPDATE chain_stages SET state = CASE WHEN p_ok THEN 'passed' ELSE 'failed' END, build_id = p_build,
                            net_id = p_net, detail = coalesce(p_detail, '')
     WHERE chain_id = p_chain AND idx = st.idx;
    IF p_ok THEN
        PERFORM xqf_chain_start(p_chain, st.idx + 1);
    ELSE
        UPDATE chain_stages SET state = 'cancelled' WHERE chain_id = p_chain AND state = 'waiting';
        UPDATE chains SET state = 'failed', finished_at = now(),
                          note = format('stage %s (%s): %s', st.idx, p_kind, p_detail)
         WHERE id = p_chain;
    END IF;
    RETURN true;
END $$;


--
-- Name: xqf_chain_run_ended(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_chain_run_ended() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    st chain_stages%ROWTYPE;
    outcome text;
BEGIN
    SELECT s.* INTO st FROM chain_stages s JOIN chains c ON c.id = s.chain_id
     WHERE s.run_id = NEW.id AND s.state = 'running' AND c.state = 'active';
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    outcome := CASE WHEN NEW.state = 'stopped' THEN 'stopped'
                    WHEN st.kind IN ('spsa', 'data') THEN 'passed'
                    WHEN NEW.verdict = 'H1 accepted' THEN 'passed' ELSE 'failed' END;
    UPDATE chain_stages SET state = outcome WHERE chain_id = st.chain_id AND idx = st.idx;
    IF outcome = 'passed' THEN
        PERFORM xqf_chain_start(st.chain_id, st.idx + 1);
    ELSE
        UPDATE chain_stages SET state = 'cancelled' WHERE chain_id = st.chain_id AND state = 'waiting';
        UPDATE chains SET state = outcome, finished_at = now(),
                          note = format('stage %s (%s, run %s): %s', st.idx, st.kind, NEW.id, coalesce(NEW.verdict, NEW.state))
         WHERE id = st.chain_id;
    END IF;
    RETURN NULL;
END $$;


--
-- Name: xqf_chain_start(bigint, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_chain_start(p_chain bigint, p_idx integer) RETURNS void
    LANGUAGE plpgsql
    AS $_$
DECLARE
    st chain_stages%ROWTYPE;
    first runs%ROWTYPE;
    c chains%ROWTYPE;
    built bigint;
    net bigint;
    id bigint;
    cols text;
BEGIN
    SELECT * INTO c FROM chains WHERE chains.id = p_chain FOR UPDATE;
    SELECT * INTO st FROM chain_stages WHERE chain_id = p_chain AND idx = p_idx;
    IF NOT FOUND THEN
        UPDATE chains SET state = 'passed', note = 'every stage passed', finished_at = now() WHERE chains.id = p_chain;
        RETURN;
    END IF;
    IF st.kind IN ('build', 'train', 'net') THEN
        UPDATE chain_stages SET state = 'running' WHERE chain_id = p_chain AND idx = p_idx;
        RETURN;
    END IF;
    SELECT r.* INTO first FROM chain_stages s JOIN runs r ON r.id = s.run_id
     WHERE s.chain_id = p_chain AND s.kind IN ('spsa', 'data') AND s.idx < p_idx ORDER BY s.idx DESC LIMIT 1;
    IF first.kind = 'data' THEN
        SELECT s.net_id INTO net FROM chain_stages s
         WHERE s.chain_id = p_chain AND s.kind = 'net' AND s.idx < p_idx ORDER BY s.idx DESC LIMIT 1;
        INSERT INTO runs (kind, name, name0, params0, name1, params1, build_id, book_name, book, nodes,
                          base_ms, inc_ms, margin_ms, hash_mb, resign_moves, resign_score, draw_after, draw_moves,
                          draw_score, max_plies, pairs_per_task, max_pairs, elo0, elo1, alpha, beta,
                          settings, test_build, base_build, tasks_on_claim, owner, throughput, test_net, base_net,
                          test_hce, base_hce)
        SELECT 'sprt', format('chain %s stage %s', p_chain, p_idx) || CASE WHEN c.name <> '' THEN ': ' || c.name ELSE '' END,
               'test', first.params0, 'base', first.params0, '', first.book_name, first.book, st.nodes,
               st.base_ms, st.inc_ms, first.margin_ms, first.hash_mb, first.resign_moves, first.resign_score,
               first.draw_after, first.draw_moves, first.draw_score, first.max_plies, first.pairs_per_task,
               st.max_pairs, st.elo0, st.elo1, st.alpha, st.beta, '{}', first.test_build,
               first.test_build, true, first.owner, first.throughput, net, c.base_net, false, c.base_hce
        RETURNING runs.id INTO id;
    ELSE
        SELECT s.build_id INTO built FROM chain_stages s
         WHERE s.chain_id = p_chain AND s.kind = 'build' AND s.idx < p_idx ORDER BY s.idx DESC LIMIT 1;
        INSERT INTO runs (kind, name, name0, params0, name1, params1, build_id, book_name, book, nodes,
                          base_ms, inc_ms, margin_ms, hash_mb, resign_moves, resign_score, draw_after, draw_moves,
                          draw_score, max_plies, pairs_per_task, max_pairs, elo0, elo1, alpha, beta,
                          settings, test_build, base_build, tasks_on_claim, owner, throughput, test_net, base_net,
                          test_hce, base_hce)
        SELECT 'sprt', format('chain %s stage %s', p_chain, p_idx) || CASE WHEN c.name <> '' THEN ': ' || c.name ELSE '' END,
               'test', xqf_spsa_set(first.id, false), 'base', xqf_spsa_set(first.id, true), '', first.book_name,
               first.book, st.nodes, st.base_ms, st.inc_ms, first.margin_ms, first.hash_mb,
               first.resign_moves, first.resign_score, first.draw_after, first.draw_moves, first.draw_score,
               first.max_plies, first.pairs_per_task, st.max_pairs, st.elo0, st.elo1, st.alpha, st.beta,
               '{}', built, c.base_build, true, first.owner, first.throughput,
               first.test_net, first.base_net, first.test_hce, first.base_hce
        RETURNING runs.id INTO id;
    END IF;
    SELECT string_agg(quote_ident(name), ', ' ORDER BY name) INTO cols FROM run_setting_columns
     WHERE name NOT IN ('elo0', 'elo1', 'alpha', 'beta', 'max_pairs', 'threads', 'replay_share', 'base_ms', 'inc_ms',
                        'base1_ms', 'inc1_ms');
    IF cols IS NOT NULL THEN
        EXECUTE format('UPDATE runs SET (%1$s) = (SELECT %1$s FROM runs WHERE id = $1) WHERE id = $2', cols)
          USING first.id, id;
    END IF;
    UPDATE chain_stages SET state = 'running', run_id = id WHERE chain_id = p_chain AND idx = p_idx;
    PERFORM xqf_finish_run(r.id, 'finished', 'nothing to test: both sides are one engine', NULL)
       FROM runs r
      WHERE r.id = (SELECT s.run_id FROM chain_stages s WHERE s.chain_id = p_chain AND s.idx = p_idx)
        AND r.params0 = r.params1 AND r.test_build IS NOT DISTINCT FROM r.base_build
        AND r.test_net IS NOT DISTINCT FROM r.base_net AND r.test_hce = r.base_hce
        AND coalesce(r.base_engine, r.engine) = r.engine
        AND (r.base1_ms = 0 OR (r.base1_ms = r.base_ms AND r.inc1_ms = r.inc_ms));
END $_$;


--
-- Name: xqf_chain_stop(bigint, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_chain_stop(p_chain bigint, p_actor text) RETURNS TABLE(o_run bigint, o_stage integer, o_cancelled integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    p_verdict text := 'stopped by ' || p_actor;
    v_run bigint;
    st chain_stages%ROWTYPE;
BEGIN
    LOOP
        SELECT s.run_id INTO v_run FROM chain_stages s WHERE s.chain_id = p_chain AND s.state = 'running';
        IF v_run IS NOT NULL THEN
            PERFORM 1 FROM runs WHERE id = v_run FOR UPDATE;
        END IF;
        PERFORM 1 FROM chains WHERE id = p_chain AND state = 'active' FOR UPDATE;
        IF NOT FOUND THEN
            RETURN;
        END IF;
        SELECT s.* INTO st FROM chain_stages s WHERE s.chain_id = p_chain AND s.state = 'running';
        EXIT WHEN st.run_id IS NOT DISTINCT FROM v_run;
    END LOOP;
    IF st.run_id IS NOT NULL THEN
        PERFORM xqf_stop_run(st.run_id, p_actor);
    END IF;
    UPDATE chain_stages SET state = 'stopped' WHERE chain_id = p_chain AND state = 'running';
    UPDATE chain_stages SET state = 'cancelled' WHERE chain_id = p_chain AND state = 'waiting';
    GET DIAGNOSTICS o_cancelled = ROW_COUNT;
    UPDATE chains SET state = 'stopped', finished_at = now(),
                      note = CASE WHEN st.idx IS NULL THEN p_verdict
                                  ELSE format('stage %s (%s%s): %s', st.idx, st.kind,
                                              CASE WHEN st.run_id IS NULL THEN '' ELSE ', run ' || st.run_id END,
                                              p_verdict) END
     WHERE id = p_chain;
    o_run := coalesce(st.run_id, 0);
    o_stage := st.idx;
    RETURN NEXT;
END $$;


--
-- Name: xqf_chain_theta(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_chain_theta() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    UPDATE runs r SET params0 = xqf_spsa_set(NEW.id, false)
      FROM chain_stages own, chain_stages later
     WHERE own.run_id = NEW.id AND later.chain_id = own.chain_id AND later.kind = 'sprt'
       AND later.run_id = r.id AND r.next_pair = 0 AND r.state = 'active';
    RETURN NULL;
END $$;


--
-- Name: xqf_claim_audit(bigint, text, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_claim_audit(p_worker bigint, p_build text, p_lease_ms bigint) RETURNS TABLE(o_audit bigint, o_token bigint, o_run bigint, o_pair bigint, o_params0 text, o_params1 text)
    LANGUAGE plpgsql
    AS $$
DECLARE
    a_id bigint;
    a_third boolean;
    v_key text;
BEGIN
    SELECT coalesce(auth_name, name) INTO v_key FROM workers WHERE id = p_worker;
    SELECT a.id, a.arbiter IS NOT NULL INTO a_id, a_third
      FROM replay_audits a JOIN runs r ON r.id = a.run_id
                           JOIN workers f ON f.id = a.first_worker
                           LEFT JOIN workers s ON s.id = a.second_worker
     WHERE ((a.state = 'pending' OR (a.state = 'leased' AND a.lease_deadline < now()))
            OR ((a.arbiter = 'pending' OR (a.arbiter = 'leased' AND a.lease_deadline < now()))
                AND s.id IS NOT NULL AND a.second_worker <> p_worker
                AND coalesce(s.auth_name, s.name) IS DISTINCT FROM v_key
                AND EXISTS (SELECT 1 FROM games g WHERE g.run_id = a.run_id AND g.game = 2 * a.pair)))
       AND a.first_worker <> p_worker AND coalesce(f.auth_name, f.name) IS DISTINCT FROM v_key
       AND r.state IN ('active', 'finished')
       AND (r.build_id = '' OR r.build_id = p_build)
     ORDER BY a.id LIMIT 1 FOR UPDATE OF a SKIP LOCKED;
    IF a_id IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
    UPDATE replay_audits a
       SET state = CASE WHEN a_third THEN a.state ELSE 'leased' END,
           second_worker = CASE WHEN a_third THEN a.second_worker ELSE p_worker END,
           arbiter = CASE WHEN a_third THEN 'leased' END,
           third_worker = CASE WHEN a_third THEN p_worker END,
           lease_token = nextval('lease_tokens'),
           lease_deadline = now() + p_lease_ms * interval '1 millisecond'
      FROM tasks t WHERE a.id = a_id AND t.id = a.task_id
    RETURNING a.id, a.lease_token, a.run_id, a.pair, t.params0, t.params1;
END $$;


--
-- Name: xqf_claim_batch(bigint, bigint[], bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_claim_batch(p_run bigint, p_workers bigint[], p_lease_ms bigint) RETURNS TABLE(o_idx integer, o_task bigint, o_token bigint, o_first bigint, o_pairs bigint, o_params0 text, o_params1 text)
    LANGUAGE plpgsql
    SET enable_hashjoin TO 'off'
    SET enable_mergejoin TO 'off'
    AS $$
DECLARE
    want integer := coalesce(array_length(p_workers, 1), 0);
    r runs%ROWTYPE;
    queued bigint[];
    slots integer[] := '{}';         -- the slot (index in p_workers) of each queued task
    rest integer[];                  -- the slots left for fresh tasks
    refused boolean;
    v_task bigint;
    got integer;
    fresh integer := 0;
BEGIN
    -- The run first (the lock order), and only an active one.
    SELECT * INTO r FROM runs WHERE id = p_run AND state = 'active' FOR UPDATE;
    IF NOT FOUND OR want = 0 THEN
        RETURN;
    END IF;
    SELECT coalesce(array_agg(id ORDER BY id), '{}'), coalesce(bool_or(cardinality(refused_by) > 0), false)
      INTO queued, refused
      FROM (SELECT id, refused_by FROM tasks WHERE run_id = p_run AND state = 'queued'
             ORDER BY id LIMIT want FOR UPDATE SKIP LOCKED) q;
    IF NOT refused THEN
        slots := array(SELECT generate_series(1, coalesce(array_length(queued, 1), 0)));
    ELSE
        queued := '{}';
        FOR i IN 1 .. want LOOP
            SELECT id INTO v_task FROM tasks
             WHERE run_id = p_run AND state = 'queued' AND NOT (p_workers[i] = ANY (refused_by))
               AND NOT (id = ANY (queued))
             ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED;
            IF FOUND THEN
                queued := queued || v_task;
                slots := slots || i;
            END IF;
        END LOOP;
    END IF;
    got := coalesce(array_length(queued, 1), 0);
    rest := array(SELECT s FROM generate_series(1, want) s WHERE NOT (s = ANY (slots)) ORDER BY s);
    IF got < want AND r.tasks_on_claim AND r.next_pair < r.max_pairs THEN
        fresh := least((want - got)::bigint,
                       (r.max_pairs - r.next_pair + r.pairs_per_task - 1) / r.pairs_per_task)::integer;
    END IF;

    RETURN QUERY
    WITH lq AS (
        UPDATE tasks t SET state = 'leased', worker_id = p_workers[c.i],
                           lease_token = nextval('lease_tokens'),
                           lease_deadline = now() + p_lease_ms * interval '1 millisecond',
                           attempts = attempts + 1
          FROM unnest(queued, slots) AS c(task, i)
         WHERE t.id = c.task
        RETURNING c.i::integer AS i, t.id, t.lease_token, t.first_pair + t.done_pairs AS first,
                  t.n_pairs - t.done_pairs AS n, t.done_pairs AS base, t.params0, t.params1),
    mk AS (
        INSERT INTO tasks (run_id, first_pair, n_pairs, params0, params1, state, worker_id,
                           lease_token, lease_deadline, attempts)
        SELECT p_run, r.next_pair + (j - 1) * r.pairs_per_task,
               least(r.pairs_per_task, r.max_pairs - r.next_pair - (j - 1) * r.pairs_per_task),
               r.params0, r.params1, 'leased', p_workers[rest[j]], nextval('lease_tokens'),
               now() + p_lease_ms * interval '1 millisecond', 1
          FROM generate_series(1, fresh) AS j
        RETURNING rest[(first_pair - r.next_pair) / r.pairs_per_task + 1]::integer AS i, id,
                  lease_token, first_pair AS first, n_pairs::bigint AS n, 0::bigint AS base,
                  params0, params1),
    given AS (SELECT * FROM lq UNION ALL SELECT * FROM mk),
    res AS (
        INSERT INTO results (task_id, lease_token, worker_id, base_pairs)
        SELECT id, lease_token, p_workers[i], base FROM given),
    nxt AS (
        UPDATE runs SET next_pair = least(max_pairs, next_pair + fresh::bigint * pairs_per_task)
         WHERE id = p_run AND fresh > 0)
    SELECT i, id, lease_token, first, n, params0, params1 FROM given ORDER BY i;
END $$;


--
-- Name: xqf_contributors_refresh(integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_contributors_refresh(p_max_age_s integer) RETURNS timestamp with time zone
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    v_as_of timestamptz := (SELECT as_of FROM contributors_made);
BEGIN
    IF v_as_of > now() - make_interval(secs => greatest(p_max_age_s, 0))
       OR NOT pg_try_advisory_xact_lock(hashtext('xqf_contributors_refresh')) THEN
        RETURN v_as_of;
    END IF;
    DELETE FROM contributors;
    INSERT INTO contributors (worker_id, name, who, concurrency, cpu_hours, pairs, tasks, crashes, time_losses, seen)
    SELECT w.id, w.name, coalesce(w.auth_name, ''), w.concurrency,
           (SELECT coalesce(sum(extract(epoch FROM upper(x) - lower(x))), 0) FROM unnest(r.spans) x)
             * w.concurrency / 3600.0,
           r.pairs, r.tasks, r.crashes, r.time_losses, greatest(w.last_seen, r.seen)
      FROM workers w
      JOIN (SELECT worker_id, sum(pairs) AS pairs, count(DISTINCT task_id) AS tasks,
                   coalesce(sum(reasons[13]), 0) AS crashes, coalesce(sum(reasons[10]), 0) AS time_losses,
                   max(updated_at) AS seen, range_agg(tstzrange(created_at, updated_at, '[]')) AS spans
              FROM results WHERE worker_id IS NOT NULL GROUP BY worker_id) r ON r.worker_id = w.id;
    UPDATE contributors_made SET as_of = now();
    RETURN now();
END $$;


--
-- Name: xqf_create_run(text, text, text, text, text, text[], bigint, text, text, text, jsonb, bigint, bigint, boolean, bigint, bigint, bigint, boolean, text, text, text, boolean, jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_create_run(p_name text, p_params0 text, p_params1 text, p_build_id text, p_book_name text, p_book text[], p_nodes bigint, p_kind text, p_name0 text, p_name1 text, p_settings jsonb, p_test_build bigint, p_base_build bigint, p_tasks_on_claim boolean, p_test_net bigint, p_base_net bigint, p_ref_nps bigint, p_game_scores boolean, p_engine text, p_base_engine text, p_owner text, p_pending boolean, p_run_settings jsonb) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $_$
DECLARE
    refused text;
    cols text;
    vals text;
    run_id bigint;
BEGIN
    IF jsonb_typeof(p_run_settings) IS DISTINCT FROM 'object' THEN
        RAISE EXCEPTION 'xqf_create_run: the run settings are not a JSON object'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT string_agg(k, ', ' ORDER BY k) INTO refused FROM jsonb_object_keys(p_run_settings) k
     WHERE k NOT IN (SELECT name FROM run_setting_columns);
    IF refused IS NOT NULL THEN
        RAISE EXCEPTION 'xqf_create_run: not a run setting: %', refused
              USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF EXISTS (SELECT 1 FROM nets WHERE id IN (p_test_net, p_base_net) AND NOT approved) THEN
        RAISE EXCEPTION 'xqf_create_run: a side''s net waits for an admin''s approval'
              USING ERRCODE = 'check_violation';
    END IF;
    IF coalesce(jsonb_typeof(p_run_settings -> 'replay_share'), 'null') = 'null' THEN
        p_run_settings := p_run_settings || jsonb_build_object('replay_share',
            CASE WHEN coalesce((p_run_settings ->> 'threads')::integer, 1) > 1 THEN 0 ELSE 0.01 END);
    END IF;
    SELECT coalesce(string_agg(format(', %I', k), '' ORDER BY k), ''),
           coalesce(string_agg(format(', s.%I', k), '' ORDER BY k), '')
      INTO cols, vals FROM jsonb_object_keys(p_run_settings) k;
    EXECUTE format('INSERT INTO runs (kind, name, name0, params0, name1, params1, build_id, book_name, book, nodes, '
                   'settings, test_build, base_build, tasks_on_claim, test_net, base_net, test_hce, '
                   'base_hce, ref_nps, game_scores, engine, base_engine, owner, state%s) '
                   'SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, '
                   '$20, $21, $22, $23, '
                   '$24%s FROM jsonb_populate_record(NULL::runs, $25) s RETURNING id', cols, vals)
       INTO run_id
      USING p_kind, p_name, p_name0, p_params0, p_name1, p_params1, p_build_id, p_book_name, p_book, p_nodes,
            p_settings, nullif(p_test_build, 0), nullif(p_base_build, 0),
            p_tasks_on_claim, nullif(greatest(p_test_net, 0), 0), nullif(greatest(p_base_net, 0), 0),
            p_test_net < 0, p_base_net < 0, p_ref_nps, p_game_scores,
            coalesce(nullif(p_engine, ''), 'xqf'),
            nullif(nullif(p_base_engine, ''), coalesce(nullif(p_engine, ''), 'xqf')), coalesce(p_owner, ''),
            CASE WHEN p_pending THEN 'pending' ELSE 'active' END, p_run_settings;
    RETURN run_id;
END
$_$;


--
-- Name: xqf_create_spsa_params(bigint, text[], double precision[], double precision[], double precision[], double precision[], double precision[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_create_spsa_params(p_run bigint, p_names text[], p_start double precision[], p_min double precision[], p_max double precision[], p_c_end double precision[], p_r_end double precision[]) RETURNS integer
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
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


--
-- Name: xqf_create_task(bigint, bigint, bigint, text, text, jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_create_task(p_run bigint, p_worker bigint, p_lease_ms bigint, p_params0 text, p_params1 text, p_perturbation jsonb) RETURNS TABLE(o_task bigint, o_token bigint, o_first bigint, o_pairs bigint, o_params0 text, o_params1 text)
    LANGUAGE plpgsql
    AS $$
DECLARE
    r runs%ROWTYPE;
    n bigint;
    id bigint;
    token bigint;
BEGIN
    SELECT * INTO r FROM runs WHERE runs.id = p_run AND state = 'active' FOR UPDATE;
    IF NOT FOUND OR r.next_pair >= r.max_pairs THEN
        RETURN;
    END IF;
    n := least(r.pairs_per_task, r.max_pairs - r.next_pair);
    UPDATE runs SET next_pair = next_pair + n WHERE runs.id = p_run;
    INSERT INTO tasks (run_id, first_pair, n_pairs, params0, params1, perturbation, state, worker_id,
                       lease_token, lease_deadline, attempts)
         VALUES (p_run, r.next_pair, n, p_params0, p_params1, p_perturbation, 'leased', p_worker,
                 nextval('lease_tokens'), now() + p_lease_ms * interval '1 millisecond', 1)
      RETURNING tasks.id, lease_token INTO id, token;
    INSERT INTO results (task_id, lease_token, worker_id, base_pairs) VALUES (id, token, p_worker, 0);
    RETURN QUERY SELECT id, token, r.next_pair, n, p_params0, p_params1;
END $$;


--
-- Name: xqf_diff(bigint[], bigint[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_diff(a bigint[], b bigint[]) RETURNS bigint[]
    LANGUAGE plpgsql IMMUTABLE
    AS $$
DECLARE
    n integer := greatest(coalesce(array_length(a, 1), 0), coalesce(array_length(b, 1), 0));
    out bigint[] := '{}';
BEGIN
    FOR i IN 1 .. n LOOP
        out[i] := coalesce(b[i], 0) - coalesce(a[i], 0);
        IF out[i] < 0 THEN
            RETURN NULL;
        END IF;
    END LOOP;
    RETURN out;
END $$;


--
-- Name: xqf_engine_add(text, text, text, text, text, text, text, text, integer, text, boolean, boolean, text, text, text, text, boolean, bigint, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_engine_add(p_name text, p_repo text, p_build text, p_cmake text, p_binary text, p_bench text, p_nodes_re text, p_nps_re text, p_depth integer, p_protocol text, p_ranks boolean, p_he boolean, p_init text, p_hash text, p_threads text, p_net text, p_needs_net boolean, p_ref_nps bigint, p_actor text) RETURNS bigint
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    WITH e AS (
    INSERT INTO engines (name, repo, build_command, cmake_target, binary_path, bench_command, bench_nodes_re,
                         bench_nps_re, bench_depth, protocol, ranks_from_one, he_letters, init, hash_option,
                         threads_option, net_option, needs_net, ref_nps, added_by)
    VALUES (p_name, p_repo, nullif(p_build, ''), nullif(p_cmake, ''), p_binary, nullif(p_bench, ''), p_nodes_re,
            p_nps_re, p_depth, p_protocol, p_ranks, p_he, string_to_array(p_init, E'\n'), p_hash, p_threads,
            p_net, p_needs_net, p_ref_nps, p_actor)
    ON CONFLICT (name) DO NOTHING
    RETURNING id),
    -- the events log's line, written with the engine or not at all
    logged AS (INSERT INTO web_audit (actor, action, detail) SELECT p_actor, 'engine add', p_name FROM e)
    SELECT id FROM e
$$;


--
-- Name: xqf_engine_changed(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_engine_changed() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO engine_history (engine_id, actor, field, old_value, new_value)
    SELECT NEW.id, coalesce(nullif(current_setting('xqf.actor', true), ''), current_user), o.key,
           o.value #>> '{}', n.value #>> '{}'
      FROM jsonb_each(to_jsonb(OLD)) o JOIN jsonb_each(to_jsonb(NEW)) n USING (key)
     WHERE o.value IS DISTINCT FROM n.value
     ORDER BY o.key;
    RETURN NULL;
END $$;


--
-- Name: xqf_engine_preset_remove(text, text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_engine_preset_remove(p_engine text, p_name text, p_actor text) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    WITH p AS (
    DELETE FROM engine_presets p USING engines e
     WHERE e.id = p.engine_id AND e.name = p_engine AND p.name = p_name
    RETURNING p.settings),
    logged AS (
    INSERT INTO web_audit (actor, action, detail)
    SELECT p_actor, 'engine preset remove', p_engine || ' ' || p_name || ' (was ' || p.settings::text || ')' FROM p)
    SELECT EXISTS (SELECT 1 FROM p)
$$;


--
-- Name: xqf_engine_preset_set(text, text, text[], text[], text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_engine_preset_set(p_engine text, p_name text, p_keys text[], p_values text[], p_actor text) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    WITH p AS (
    INSERT INTO engine_presets (engine_id, name, settings, updated_by)
    SELECT id, p_name, jsonb_object(p_keys, p_values), p_actor FROM engines WHERE name = p_engine
    ON CONFLICT (engine_id, name) DO UPDATE
        SET settings = EXCLUDED.settings, updated_by = EXCLUDED.updated_by, updated_at = now()
    RETURNING 1),
    logged AS (
    INSERT INTO web_audit (actor, action, detail)
    SELECT p_actor, 'engine preset set',
           p_engine || ' ' || p_name || ': ' ||
           coalesce((SELECT string_agg(k || '=' || v, ' ' ORDER BY i)
                       FROM unnest(p_keys, p_values) WITH ORDINALITY AS u(k, v, i)), '')
      FROM p)
    SELECT EXISTS (SELECT 1 FROM p)
$$;


--
-- Name: xqf_expire_given(bigint[], bigint[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_expire_given(p_tasks bigint[], p_tokens bigint[]) RETURNS bigint
    LANGUAGE sql
    AS $$
    -- The lock order (docs/architecture.md): the tasks' runs first, by id,
    -- then the tasks, by id.  Tasks locked without their run deadlocked
    -- with a run's end (xqf_finish_run: a verdict, a stop, the load
    -- generator's end), which held the run and locked the run's tasks in
    -- the order its scan met them, not by id (issue 64, a restart storm).
    SELECT 1 FROM runs WHERE id IN (SELECT run_id FROM tasks WHERE id = ANY (p_tasks)) ORDER BY id FOR UPDATE;
    WITH g AS (
        SELECT * FROM unnest(p_tasks, p_tokens) AS g(task, token)),
    e AS (
        SELECT t.id, t.lease_token FROM tasks t JOIN g ON t.id = g.task AND t.lease_token = g.token
         WHERE t.state = 'leased' ORDER BY t.id FOR UPDATE OF t),
    t AS (
        UPDATE tasks SET state = 'queued', worker_id = NULL, lease_token = NULL,
                         lease_deadline = NULL, last_error = 'lease expired'
          FROM e WHERE tasks.id = e.id
        RETURNING tasks.id),
    r AS (
        UPDATE results x SET expired = true FROM e WHERE x.task_id = e.id AND x.lease_token = e.lease_token)
    SELECT count(*) FROM t
$$;


--
-- Name: xqf_finish_run(bigint, text, text, double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_finish_run(p_run bigint, p_state text, p_verdict text, p_llr double precision) RETURNS boolean
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_quarantined bigint;
BEGIN
    -- The lock order (docs/architecture.md): the run, then its tasks by id.
    -- The UPDATE below alone would lock them in the order its scan meets
    -- them (their place in the table), against the id order of every
    -- other writer of several tasks (issue 64: a deadlock with an expiry).
    PERFORM 1 FROM runs WHERE id = p_run AND state = 'active' FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM 1 FROM tasks WHERE run_id = p_run AND state IN ('queued', 'leased') ORDER BY id FOR UPDATE;
    IF p_state = 'finished' AND p_verdict = 'max pairs' THEN
        SELECT count(*) INTO v_quarantined FROM tasks WHERE run_id = p_run AND state = 'quarantined';
        IF v_quarantined > 0 THEN
            p_state := 'stopped';
            p_verdict := format('%s tasks quarantined: xqf-tune show %s', v_quarantined, p_run);
        END IF;
    END IF;
    UPDATE tasks SET state = 'cancelled', finished_at = now()
     WHERE run_id = p_run AND state IN ('queued', 'leased');
    UPDATE runs SET state = p_state, verdict = p_verdict, llr = coalesce(p_llr, llr), finished_at = now()
     WHERE id = p_run AND state = 'active';
    RETURN FOUND;
END $$;


--
-- Name: xqf_game_bare(bytea); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_game_bare(rec bytea) RETURNS bytea
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT substring(rec FROM 1 FOR 2) || '\x00'::bytea || substring(rec FROM 4 + get_byte(rec, 2))
$$;


--
-- Name: xqf_game_fen(bytea); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_game_fen(rec bytea) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT convert_from(substring(rec FROM 4 FOR get_byte(rec, 2)), 'UTF8')
$$;


--
-- Name: xqf_game_full(bytea, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_game_full(bare bytea, fen text) RETURNS bytea
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT substring(bare FROM 1 FOR 2) || set_byte('\x00'::bytea, 0, octet_length(fen)) ||
           convert_to(fen, 'UTF8') || substring(bare FROM 4)
$$;


--
-- Name: xqf_game_plies(bytea); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_game_plies(bare bytea) RETURNS integer
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT get_byte(bare, 3) + 256 * get_byte(bare, 4)
$$;


--
-- Name: xqf_games_batch(bigint[], bigint[], integer[], bytea, integer[], integer[], integer[], integer[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_games_batch(p_task bigint[], p_token bigint[], p_count integer[], p_records bytea, p_item integer[], p_k integer[], p_off integer[], p_len integer[]) RETURNS bigint
    LANGUAGE plpgsql
    SET enable_hashjoin TO 'off'
    SET enable_mergejoin TO 'off'
    AS $_$
DECLARE
    n bigint;
BEGIN
    -- New FENs first, in a statement of their own: one inserted by another
    -- session meanwhile is seen by the next statement's snapshot.
    -- $1 p_records, $2 p_off, $3 p_len
    EXECUTE $q$
    INSERT INTO game_fens (fen)
    SELECT DISTINCT x.fen
      FROM (SELECT xqf_game_fen(substring($1 FROM u.off + 1 FOR u.len)) AS fen
              FROM unnest($2::integer[], $3::integer[]) AS u(off, len)) AS x
     WHERE NOT EXISTS (SELECT 1 FROM game_fens f WHERE f.fen = x.fen)
    ON CONFLICT DO NOTHING
    $q$ USING p_records, p_off, p_len;
    -- $1 p_task, $2 p_token, $3 p_count, $4 p_records, $5 p_item, $6 p_k, $7 p_off, $8 p_len
    EXECUTE $q$
    WITH src AS (
        -- a record's report by subscript ($5), not by a join of the two lists
        SELECT t.id AS task, t.run_id, 2 * (t.first_pair + r.base_pairs) + x.k - 1 AS game,
               coalesce(r.worker_id, 0) AS worker, u.nodes, u.replay_share AS share,
               substring($4 FROM x.off + 1 FOR x.len) AS rec
          FROM unnest($5::integer[], $6::integer[], $7::integer[], $8::integer[]) AS x(item, k, off, len)
          JOIN tasks t ON t.id = ($1::bigint[])[x.item]
          JOIN results r ON r.task_id = ($1::bigint[])[x.item] AND r.lease_token = ($2::bigint[])[x.item]
                        AND 2 * r.pairs = ($3::integer[])[x.item]
          JOIN runs u ON u.id = t.run_id),
    ins AS (
        INSERT INTO games (run_id, game, worker_id, fen_id, record)
        SELECT src.run_id, src.game, src.worker, f.id, xqf_game_bare(src.rec)
          FROM src JOIN game_fens f ON f.fen = xqf_game_fen(src.rec)
        ON CONFLICT DO NOTHING
        RETURNING run_id, game),
    audit AS (
        -- a game new with this statement: not there in its snapshot, which
        -- ins's rows are not part of (a probe per chosen game, where a join
        -- with ins would compare every record with every other)
        INSERT INTO replay_audits (run_id, pair, task_id, first_worker)
        SELECT src.run_id, src.game / 2, src.task, src.worker
          FROM src
         WHERE src.nodes > 0 AND src.game % 2 = 0 AND xqf_replayed(src.run_id, src.game / 2, src.share)
           AND NOT EXISTS (SELECT 1 FROM games g WHERE g.run_id = src.run_id AND g.game = src.game)
        ON CONFLICT DO NOTHING)
    SELECT count(*) FROM ins
    $q$ INTO n USING p_task, p_token, p_count, p_records, p_item, p_k, p_off, p_len;
    RETURN n;
END $_$;


--
-- Name: xqf_handback(bigint, bigint, bigint, text, boolean, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_handback(p_worker bigint, p_task bigint, p_token bigint, p_reason text, p_refused boolean, p_quarantine_after integer) RETURNS text
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_state text;
    v_run bigint;
    v_key text;
    v_keys integer;
    v_need integer;
BEGIN
    -- The lock order (docs/architecture.md): the task's run first, then
    -- the task.  The coordinator hands back in the same transaction as the
    -- batch's reports and claims, which lock the run: a task locked before
    -- its run there deadlocked with a run's end (xqf_finish_run: the run,
    -- then its tasks), as in a restart storm, whose late answers are
    -- handed back (issue 64); and a refusal may end the run itself below.
    PERFORM 1 FROM runs WHERE id = (SELECT run_id FROM tasks WHERE id = p_task) FOR UPDATE;
    SELECT coalesce(auth_name, name) INTO v_key FROM workers WHERE id = p_worker;
    -- a refusal of a build the worker reported it will not run is about the worker: no key counted
    IF p_refused AND EXISTS (SELECT 1 FROM tasks t JOIN runs r ON r.id = t.run_id
                                JOIN engine_builds b ON b.id IN (r.test_build, r.base_build)
                                JOIN worker_builds wb ON wb.worker_id = p_worker AND wb.sha256 = b.sha256
                               WHERE t.id = p_task AND coalesce(wb.refused, '') <> '') THEN
        v_key := NULL;
    END IF;
    IF p_refused AND v_key IS NOT NULL THEN   -- the cluster's keys are counted for a counting refusal only
        SELECT count(DISTINCT coalesce(auth_name, name)) INTO v_keys
          FROM workers WHERE last_seen > now() - interval '7 days' OR id = p_worker;
        v_need := least(p_quarantine_after, greatest(v_keys, 1));
    END IF;
    UPDATE tasks SET state = CASE WHEN p_refused AND p_quarantine_after > 0 AND v_key IS NOT NULL
                                       AND cardinality(array(SELECT DISTINCT k FROM unnest(refused_keys || v_key) k))
                                           >= v_need
                                  THEN 'quarantined' ELSE 'queued' END,
                     worker_id = NULL, lease_token = NULL, lease_deadline = NULL, last_error = p_reason,
                     refusals = refusals + CASE WHEN p_refused THEN 1 ELSE 0 END,
                     refused_by = CASE WHEN p_refused AND v_key IS NOT NULL AND NOT p_worker = ANY (refused_by)
                                       THEN refused_by || p_worker ELSE refused_by END,
                     refused_keys = CASE WHEN p_refused AND v_key IS NOT NULL AND NOT v_key = ANY (refused_keys)
                                         THEN refused_keys || v_key ELSE refused_keys END,
                     refusal_reasons = CASE WHEN p_refused
                                            THEN (refusal_reasons || p_reason)[greatest(1, cardinality(refusal_reasons) - 8):]
                                            ELSE refusal_reasons END
     WHERE id = p_task AND lease_token = p_token AND state = 'leased' AND worker_id = p_worker
    RETURNING state, run_id INTO v_state, v_run;
    IF NOT FOUND THEN
        RETURN 'stale';
    END IF;
    IF v_state <> 'quarantined' THEN
        RETURN 'ok';
    END IF;
    PERFORM xqf_finish_run(r.id, 'finished', 'max pairs', NULL)
       FROM runs r
      WHERE r.id = v_run AND r.state = 'active' AND r.next_pair >= r.max_pairs
        AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.run_id = r.id AND t.state IN ('queued', 'leased'));
    RETURN 'quarantined';
END $$;


--
-- Name: xqf_hello(text, text, integer, integer, text, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_hello(p_name text, p_build text, p_cores integer, p_concurrency integer, p_auth text, p_names_max integer) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_id bigint;
BEGIN
    IF p_auth <> '' AND p_names_max > 0 AND NOT EXISTS (SELECT 1 FROM workers WHERE name = p_name)
       AND (SELECT count(*) FROM workers WHERE auth_name = p_auth) >= p_names_max THEN
        RETURN -1;
    END IF;
    INSERT INTO workers (name, build_id, cores, concurrency, auth_name)
    VALUES (p_name, p_build, p_cores, p_concurrency, nullif(p_auth, ''))
    ON CONFLICT (name) DO UPDATE SET build_id = EXCLUDED.build_id, cores = EXCLUDED.cores,
        concurrency = EXCLUDED.concurrency, last_seen = now(),
        auth_name = coalesce(workers.auth_name, EXCLUDED.auth_name)
     WHERE workers.auth_name IS NULL OR workers.auth_name = EXCLUDED.auth_name
    RETURNING id INTO v_id;
    RETURN v_id;
END $$;


--
-- Name: xqf_modify_run(bigint, text, integer, integer, bigint, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_modify_run(p_run bigint, p_actor text, p_priority integer, p_throughput integer, p_max_pairs bigint, p_extend bigint) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r runs%ROWTYPE;
    cap bigint;
    what text := '';
BEGIN
    SELECT * INTO r FROM runs WHERE id = p_run FOR UPDATE;
    IF NOT FOUND THEN
        RETURN format('no run %s', p_run);
    END IF;
    IF r.state IN ('finished', 'stopped') THEN
        RETURN format('run %s is %s: only a run that has not ended can be changed', p_run, r.state);
    END IF;
    IF p_throughput IS NOT NULL AND p_throughput NOT BETWEEN 1 AND 1000 THEN
        RETURN format('throughput %s%% is outside 1-1000', p_throughput);
    END IF;
    IF p_extend IS NOT NULL AND r.kind <> 'spsa' THEN
        RETURN format('run %s (%s) is not an SPSA run: only SPSA runs are extended (give --max-pairs)', p_run, r.kind);
    END IF;
    IF p_extend IS NOT NULL AND p_extend < 1 THEN
        RETURN 'the extension must be at least one pair';
    END IF;
    IF p_max_pairs IS NOT NULL AND p_extend IS NOT NULL THEN
        RETURN 'give a new cap or an extension, not both';
    END IF;
    cap := coalesce(p_max_pairs, r.max_pairs + p_extend, r.max_pairs);
    IF cap < 1 THEN
        RETURN format('max pairs %s must be at least 1', cap);
    END IF;
    IF cap < r.next_pair THEN
        RETURN format('max pairs %s is below the %s pairs already given out (%s played)', cap, r.next_pair, r.pairs);
    END IF;
    IF p_priority IS NOT NULL AND p_priority <> r.priority THEN
        what := what || format(', priority %s -> %s', r.priority, p_priority);
    END IF;
    IF p_throughput IS NOT NULL AND p_throughput <> r.throughput THEN
        what := what || format(', throughput %s%% -> %s%%', r.throughput, p_throughput);
    END IF;
    IF cap <> r.max_pairs THEN
        what := what || format(', max pairs %s -> %s', r.max_pairs, cap);
    END IF;
    IF what = '' THEN
        RETURN 'nothing to change';
    END IF;
    UPDATE runs SET priority = coalesce(p_priority, priority), throughput = coalesce(p_throughput, throughput),
                    max_pairs = cap
     WHERE id = p_run;
    INSERT INTO web_audit (actor, run_id, action, detail) VALUES (p_actor, p_run, 'modify', substr(what, 3));
    IF r.state = 'active' AND r.next_pair >= cap
       AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.run_id = p_run AND t.state IN ('queued', 'leased')) THEN
        PERFORM xqf_finish_run(p_run, 'finished', 'max pairs', NULL);
    END IF;
    RETURN '';
END $$;


--
-- Name: xqf_modify_spsa(bigint, text, text[], double precision[], double precision[], double precision[], double precision[], double precision, double precision, double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_modify_spsa(p_run bigint, p_actor text, p_names text[], p_min double precision[], p_max double precision[], p_c_end double precision[], p_r_end double precision[], p_alpha double precision, p_gamma double precision, p_a_ratio double precision) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r runs%ROWTYPE;
    p run_params%ROWTYPE;
    n integer := coalesce(array_length(p_names, 1), 0);
    what text := '';
    v_theta double precision;
    v_old double precision;
BEGIN
    SELECT * INTO r FROM runs WHERE id = p_run FOR UPDATE;
    IF NOT FOUND THEN
        RETURN format('no run %s', p_run);
    END IF;
    IF r.kind <> 'spsa' THEN
        RETURN format('run %s (%s) is not an SPSA run: only an SPSA run has a spec and a schedule', p_run, r.kind);
    END IF;
    IF r.state IN ('finished', 'stopped') THEN
        RETURN format('run %s is %s: only a run that has not ended can be changed', p_run, r.state);
    END IF;
    IF coalesce(array_length(p_min, 1), 0) <> n OR coalesce(array_length(p_max, 1), 0) <> n
       OR coalesce(array_length(p_c_end, 1), 0) <> n OR coalesce(array_length(p_r_end, 1), 0) <> n THEN
        RETURN 'the spec''s columns differ in length';
    END IF;
    -- every line checked before anything changes: all or nothing
    FOR i IN 1 .. n LOOP
        IF NOT EXISTS (SELECT 1 FROM run_params WHERE run_id = p_run AND name = p_names[i]) THEN
            RETURN format('%s is not a parameter of run %s (parameters are not added or removed)', p_names[i], p_run);
        END IF;
        IF NOT (p_min[i] < p_max[i]) THEN
            RETURN format('%s: min %s is not below max %s', p_names[i], p_min[i], p_max[i]);
        END IF;
        IF NOT (p_c_end[i] > 0 AND p_r_end[i] > 0) THEN
            RETURN format('%s: c_end and r_end must be positive', p_names[i]);
        END IF;
    END LOOP;
    IF p_alpha <= 0 OR p_gamma <= 0 OR p_a_ratio < 0 THEN
        RETURN 'alpha and gamma must be positive, a_ratio not negative';
    END IF;
    FOR i IN 1 .. n LOOP
        SELECT * INTO p FROM run_params WHERE run_id = p_run AND name = p_names[i] FOR UPDATE;
        CONTINUE WHEN (p.min, p.max, p.c_end, p.r_end) = (p_min[i], p_max[i], p_c_end[i], p_r_end[i]);
        v_theta := least(greatest(p.theta, p_min[i]), p_max[i]);
        what := what || format(', %s [%s, %s] c_end %s r_end %s -> [%s, %s] c_end %s r_end %s', p.name, p.min, p.max,
                               p.c_end, p.r_end, p_min[i], p_max[i], p_c_end[i], p_r_end[i])
                     || CASE WHEN v_theta <> p.theta THEN format(' (theta %s -> %s)', p.theta, v_theta) ELSE '' END;
        UPDATE run_params SET min = p_min[i], max = p_max[i], c_end = p_c_end[i], r_end = p_r_end[i], theta = v_theta
         WHERE run_id = p_run AND idx = p.idx;
    END LOOP;
    v_old := (r.settings ->> 'alpha')::double precision;
    IF p_alpha IS NOT NULL AND p_alpha IS DISTINCT FROM v_old THEN
        what := what || format(', alpha %s -> %s', v_old, p_alpha);
    END IF;
    v_old := (r.settings ->> 'gamma')::double precision;
    IF p_gamma IS NOT NULL AND p_gamma IS DISTINCT FROM v_old THEN
        what := what || format(', gamma %s -> %s', v_old, p_gamma);
    END IF;
    v_old := (r.settings ->> 'a_ratio')::double precision;
    IF p_a_ratio IS NOT NULL AND p_a_ratio IS DISTINCT FROM v_old THEN
        what := what || format(', a_ratio %s -> %s', v_old, p_a_ratio);
    END IF;
    IF what = '' THEN
        RETURN 'nothing to change';
    END IF;
    UPDATE runs SET settings = coalesce(settings, '{}'::jsonb)
                               || jsonb_strip_nulls(jsonb_build_object('alpha', p_alpha, 'gamma', p_gamma,
                                                                       'a_ratio', p_a_ratio))
     WHERE id = p_run;
    INSERT INTO web_audit (actor, run_id, action, detail) VALUES (p_actor, p_run, 'modify', 'spsa ' || substr(what, 3));
    RETURN '';
END $$;


--
-- Name: xqf_net_approve(text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_net_approve(p_name text, p_actor text) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    v_net nets%ROWTYPE;
BEGIN
    SELECT * INTO v_net FROM nets WHERE name = p_name FOR UPDATE;
    IF NOT FOUND THEN
        RETURN -1;
    END IF;
    IF v_net.approved THEN
        RETURN 0;
    END IF;
    UPDATE nets SET approved = true, approved_by = p_actor, approved_at = now() WHERE id = v_net.id;
    INSERT INTO web_audit (actor, action, detail)
    VALUES (p_actor, 'net approve', format('%s (net %s, sha256 %s)', v_net.name, v_net.id, v_net.sha256));
    RETURN 1;
END
$$;


--
-- Name: xqf_net_upload(text, text, text, text, bytea, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_net_upload(p_sha256 text, p_name text, p_description text, p_provenance text, p_bytes bytea, p_actor text) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    v_id bigint;
BEGIN
    INSERT INTO nets (sha256, name, description, provenance, bytes, added_by, approved)
    VALUES (p_sha256, p_name, p_description, p_provenance, p_bytes, p_actor, false)
    ON CONFLICT DO NOTHING
    RETURNING id INTO v_id;
    IF v_id IS NOT NULL THEN
        INSERT INTO web_audit (actor, action, detail)
        VALUES (p_actor, 'net upload', format('%s (net %s, sha256 %s, %s bytes)', p_name, v_id, p_sha256,
                                              octet_length(p_bytes)));
    END IF;
    RETURN v_id;
END
$$;


--
-- Name: xqf_open_audits(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_open_audits() RETURNS bigint
    LANGUAGE sql STABLE
    AS $$
    SELECT (SELECT count(*) FROM replay_audits WHERE state IN ('pending', 'leased'))
         + (SELECT count(*) FROM replay_audits a WHERE a.arbiter IN ('pending', 'leased')
               AND EXISTS (SELECT 1 FROM games g WHERE g.run_id = a.run_id AND g.game = 2 * a.pair))
$$;


--
-- Name: xqf_pair_counts(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_pair_counts(p text) RETURNS bigint[]
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT ARRAY[2 * a + b + c, b + 2 * d + e, c + e + 2 * f, f, e, c + d, b, a]::bigint[]
      FROM (SELECT length(p) - length(replace(p, 'a', '')) AS a, length(p) - length(replace(p, 'b', '')) AS b,
                   length(p) - length(replace(p, 'c', '')) AS c, length(p) - length(replace(p, 'd', '')) AS d,
                   length(p) - length(replace(p, 'e', '')) AS e, length(p) - length(replace(p, 'f', '')) AS f) x
$$;


--
-- Name: xqf_progression_add(text, text, text, text, text, text, text, bigint[], text[], text[], text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_progression_add(p_name text, p_engine text, p_base_ref text, p_base_commit text, p_base_date text, p_base_subject text, p_created_by text, p_runs bigint[], p_refs text[], p_commits text[], p_dates text[], p_subjects text[]) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    v_id bigint;
BEGIN
    INSERT INTO progressions (name, engine, base_ref, base_commit, base_date, base_subject, created_by)
    VALUES (p_name, p_engine, p_base_ref, nullif(p_base_commit, ''), nullif(p_base_date, '')::timestamptz,
            coalesce(p_base_subject, ''),
            coalesce(p_created_by, ''))
    ON CONFLICT (name) DO NOTHING RETURNING id INTO v_id;
    IF v_id IS NULL THEN
        RETURN NULL;
    END IF;
    INSERT INTO progression_points (progression_id, run_id, ref, git_commit, committed_at, subject)
    SELECT v_id, u.run, u.ref, nullif(u.git_commit, ''), nullif(u.at, '')::timestamptz, coalesce(u.subject, '')
      FROM unnest(p_runs, p_refs, p_commits, p_dates, p_subjects) AS u(run, ref, git_commit, at, subject);
    RETURN v_id;
END
$$;


--
-- Name: xqf_progression_pin(bigint, text, text, timestamp with time zone, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_progression_pin(p_run bigint, p_side text, p_commit text, p_date timestamp with time zone, p_subject text) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    UPDATE progression_points
       SET git_commit = p_commit, committed_at = p_date, subject = left(coalesce(p_subject, ''), 512)
     WHERE run_id = p_run AND p_side = 'test' AND git_commit IS NULL;
    UPDATE progressions p
       SET base_commit = p_commit, base_date = p_date, base_subject = left(coalesce(p_subject, ''), 512)
      FROM progression_points pp
     WHERE pp.run_id = p_run AND pp.progression_id = p.id AND p_side = 'base' AND p.base_commit IS NULL;
$$;


--
-- Name: xqf_purge_done(bigint, double precision, boolean, text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_purge_done(p_run bigint, p_llr double precision, p_reopen boolean, p_actor text, p_detail text) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    UPDATE runs SET llr = p_llr, state = CASE WHEN p_reopen THEN 'active' ELSE state END,
                    verdict = CASE WHEN p_reopen THEN NULL ELSE verdict END,
                    finished_at = CASE WHEN p_reopen THEN NULL ELSE finished_at END
     WHERE id = p_run;
    INSERT INTO web_audit (actor, run_id, action, detail) VALUES (p_actor, p_run, 'purge', p_detail);
$$;


--
-- Name: xqf_purge_worker(bigint, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_purge_worker(p_run bigint, p_worker bigint) RETURNS TABLE(o_pairs bigint, o_games bigint)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    n_pairs bigint;
    n_games bigint;
BEGIN
    PERFORM 1 FROM runs WHERE id = p_run FOR UPDATE;
    PERFORM 1 FROM tasks WHERE run_id = p_run ORDER BY id FOR UPDATE;
    UPDATE tasks SET state = 'queued', worker_id = NULL, lease_token = NULL, lease_deadline = NULL,
                     last_error = 'worker purged'
     WHERE run_id = p_run AND state = 'leased' AND worker_id = p_worker;
    CREATE TEMP TABLE purge_sums ON COMMIT DROP AS
    WITH p AS (
        UPDATE results x SET purged = true FROM tasks t
         WHERE t.id = x.task_id AND t.run_id = p_run AND x.worker_id = p_worker AND NOT x.purged
        RETURNING x.*)
    SELECT task_id, sum(pairs) AS pairs, sum(wins) AS wins, sum(draws) AS draws, sum(losses) AS losses,
           sum(ll) AS ll, sum(ld) AS ld, sum(dd) AS dd, sum(wd) AS wd, sum(ww) AS ww,
           xqf_add_all(reasons) AS reasons
      FROM p GROUP BY task_id;
    UPDATE tasks t SET purged_pairs = t.purged_pairs + p.pairs, wins = t.wins - p.wins,
                       draws = t.draws - p.draws, losses = t.losses - p.losses, ll = t.ll - p.ll,
                       ld = t.ld - p.ld, dd = t.dd - p.dd, wd = t.wd - p.wd, ww = t.ww - p.ww,
                       reasons = xqf_diff(p.reasons, t.reasons)
      FROM purge_sums p WHERE t.id = p.task_id;
    UPDATE runs u SET pairs = u.pairs - s.pairs, wins = u.wins - s.wins, draws = u.draws - s.draws,
                      losses = u.losses - s.losses, ll = u.ll - s.ll, ld = u.ld - s.ld, dd = u.dd - s.dd,
                      wd = u.wd - s.wd, ww = u.ww - s.ww, reasons = xqf_diff(s.reasons, u.reasons)
      FROM (SELECT sum(pairs) AS pairs, sum(wins) AS wins, sum(draws) AS draws, sum(losses) AS losses,
                   sum(ll) AS ll, sum(ld) AS ld, sum(dd) AS dd, sum(wd) AS wd, sum(ww) AS ww,
                   xqf_add_all(reasons) AS reasons
              FROM purge_sums HAVING count(*) > 0) s
     WHERE u.id = p_run;
    SELECT coalesce(sum(pairs), 0) INTO n_pairs FROM purge_sums;
    DROP TABLE purge_sums;
    -- its pairs' open audits would compare against nothing
    DELETE FROM replay_audits WHERE run_id = p_run AND first_worker = p_worker AND state IN ('pending', 'leased');
    WITH d AS (DELETE FROM games WHERE run_id = p_run AND worker_id = p_worker RETURNING 1)
    SELECT count(*) INTO n_games FROM d;
    RETURN QUERY SELECT n_pairs, n_games;
END $$;


--
-- Name: xqf_replayed(bigint, bigint, double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_replayed(p_run bigint, p_pair bigint, p_share double precision) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
    SELECT ('x' || encode(substring(sha256(s.outer_pad || sha256(s.inner_pad || int8send(p_run) || int8send(p_pair)))
                                    FROM 1 FOR 4), 'hex'))::bit(32)::bigint < p_share * 4294967296
      FROM audit_secret s
$$;


--
-- Name: xqf_report_batch(bigint[], bigint[], bigint[], bigint[], bigint[], bigint[], bigint[], bigint[], bigint[], bigint[], bigint[], bigint[], text[], bigint[], text[], bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_report_batch(p_worker bigint[], p_task bigint[], p_token bigint[], p_pairs bigint[], p_w bigint[], p_d bigint[], p_l bigint[], p_ll bigint[], p_ld bigint[], p_dd bigint[], p_wd bigint[], p_ww bigint[], p_reasons text[], p_from bigint[], p_codes text[], p_lease_ms bigint) RETURNS TABLE(o_idx integer, o_status text, o_run bigint, o_task_done boolean)
    LANGUAGE plpgsql
    SET enable_hashjoin TO 'off'
    SET enable_mergejoin TO 'off'
    AS $_$
DECLARE
    v_idx integer[];
    v_status text[];
    v_run bigint[];
    v_done boolean[];
    runs_done bigint[];
BEGIN
    IF coalesce(array_length(p_task, 1), 0) = 0 THEN
        RETURN;
    END IF;
    -- Locks the runs, then the tasks, each in id order: the order every
    -- writer uses (xqf_finish_run, claims), so batches never deadlock.
    PERFORM 1 FROM runs WHERE id IN (SELECT run_id FROM tasks WHERE id = ANY (p_task))
      ORDER BY id FOR UPDATE;
    PERFORM 1 FROM tasks WHERE id = ANY (p_task) ORDER BY id FOR UPDATE;

    -- $1 .. $16: p_worker .. p_lease_ms, in the function's order
    EXECUTE $q$
    WITH x AS (
        SELECT i, task, token, t.run_id AS run, n, rs, r.reasons AS prev_reasons,
               CASE WHEN t.id IS NULL OR t.state <> 'leased' OR t.lease_token IS DISTINCT FROM token
                         OR t.worker_id IS DISTINCT FROM worker THEN 'stale'
                    WHEN r.task_id IS NULL
                         OR n[1] < r.pairs OR r.base_pairs + n[1] > t.n_pairs
                         OR n[2] < r.wins OR n[3] < r.draws OR n[4] < r.losses
                         OR n[5] < r.ll OR n[6] < r.ld OR n[7] < r.dd OR n[8] < r.wd OR n[9] < r.ww
                         OR n[2] + n[3] + n[4] <> 2 * n[1] OR n[5] + n[6] + n[7] + n[8] + n[9] <> n[1]
                         OR n[4] < 2 * n[5] + n[6] OR n[2] < 2 * n[9] + n[8]
                         OR xqf_diff(r.reasons, rs) IS NULL OR xqf_sum(rs) <> 2 * n[1]
                         -- the new pairs' counts are those of their records
                         OR gfrom > r.pairs OR codes !~ '^[a-f]*$' OR length(codes) <> n[1] - gfrom
                         OR xqf_pair_counts(substr(codes, (r.pairs - gfrom)::integer + 1))
                            IS DISTINCT FROM ARRAY[n[2] - r.wins, n[3] - r.draws, n[4] - r.losses, n[5] - r.ll,
                                                   n[6] - r.ld, n[7] - r.dd, n[8] - r.wd, n[9] - r.ww]
                    THEN 'invalid'
                    WHEN n[1] = r.pairs THEN 'duplicate'
                    ELSE 'accepted' END AS status,
               coalesce(t.state = 'done', false) AS was_done,
               t.done_pairs + n[1] - r.pairs >= t.n_pairs AS now_done,
               n[1] - r.pairs AS dp,
               ARRAY[r.pairs, r.wins, r.draws, r.losses, r.ll, r.ld, r.dd, r.wd, r.ww] AS prev
          FROM (SELECT i::integer AS i, worker, task, token, ARRAY[pairs, w, d, l, ll, ld, dd, wd, ww] AS n,
                       rtext::bigint[] AS rs, gfrom, codes
                  FROM unnest($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,
                              $11, $12, $13, $14, $15)
                       WITH ORDINALITY AS u(worker, task, token, pairs, w, d, l, ll, ld, dd, wd, ww,
                                            rtext, gfrom, codes, i)) AS a
               LEFT JOIN tasks t ON t.id = a.task
               LEFT JOIN results r ON r.task_id = a.task AND r.lease_token = a.token),
    acc AS (SELECT * FROM x WHERE status = 'accepted'),
    u_results AS (
        UPDATE results r SET pairs = acc.n[1], wins = acc.n[2], draws = acc.n[3], losses = acc.n[4],
                             ll = acc.n[5], ld = acc.n[6], dd = acc.n[7], wd = acc.n[8], ww = acc.n[9],
                             reasons = acc.rs, reports = r.reports + 1, updated_at = now()
          FROM acc WHERE r.task_id = acc.task AND r.lease_token = acc.token),
    u_tasks AS (
        UPDATE tasks t SET
               done_pairs = t.done_pairs + x.dp,
               wins = t.wins + x.n[2] - x.prev[2], draws = t.draws + x.n[3] - x.prev[3],
               losses = t.losses + x.n[4] - x.prev[4],
               ll = t.ll + x.n[5] - x.prev[5], ld = t.ld + x.n[6] - x.prev[6],
               dd = t.dd + x.n[7] - x.prev[7], wd = t.wd + x.n[8] - x.prev[8],
               ww = t.ww + x.n[9] - x.prev[9],
               reasons = xqf_add(t.reasons, xqf_diff(x.prev_reasons, x.rs)),
               lease_deadline = now() + $16 * interval '1 millisecond',
               state = CASE WHEN x.now_done THEN 'done' ELSE t.state END,
               finished_at = CASE WHEN x.now_done THEN now() END
          FROM x WHERE x.status IN ('accepted', 'duplicate') AND t.id = x.task),
    u_runs AS (
        UPDATE runs u SET pairs = u.pairs + d.dp,
               wins = u.wins + d.w, draws = u.draws + d.d, losses = u.losses + d.l,
               ll = u.ll + d.s_ll, ld = u.ld + d.s_ld, dd = u.dd + d.s_dd, wd = u.wd + d.s_wd,
               ww = u.ww + d.s_ww, reasons = xqf_add(u.reasons, d.dr)
          FROM (SELECT run, sum(dp) AS dp, sum(n[2] - prev[2]) AS w, sum(n[3] - prev[3]) AS d,
                       sum(n[4] - prev[4]) AS l, sum(n[5] - prev[5]) AS s_ll, sum(n[6] - prev[6]) AS s_ld,
                       sum(n[7] - prev[7]) AS s_dd, sum(n[8] - prev[8]) AS s_wd, sum(n[9] - prev[9]) AS s_ww,
                       xqf_add_all(xqf_diff(prev_reasons, rs)) AS dr
                  FROM acc GROUP BY run) d
         WHERE u.id = d.run)
    SELECT array_agg(i ORDER BY i), array_agg(status ORDER BY i), array_agg(run ORDER BY i),
           array_agg(CASE WHEN status = 'accepted' THEN now_done
                          WHEN status = 'stale' THEN was_done ELSE false END ORDER BY i),
           array_agg(DISTINCT run) FILTER (WHERE status = 'accepted' AND now_done)
      FROM x
    $q$ INTO v_idx, v_status, v_run, v_done, runs_done
    USING p_worker, p_task, p_token, p_pairs, p_w, p_d, p_l, p_ll, p_ld, p_dd, p_wd, p_ww, p_reasons, p_from, p_codes, p_lease_ms;

    -- A run whose pairs are all given out and played is over.
    PERFORM xqf_finish_run(r.id, 'finished', 'max pairs', NULL)
       FROM runs r
      WHERE r.id = ANY (coalesce(runs_done, '{}')) AND r.next_pair >= r.max_pairs
        AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.run_id = r.id AND t.state IN ('queued', 'leased'));

    RETURN QUERY SELECT * FROM unnest(v_idx, v_status, v_run, v_done);
END $_$;


--
-- Name: xqf_run_book_add(bigint, text, text, integer, integer, integer, integer, integer, integer, double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_run_book_add(p_run bigint, p_format text, p_sha256 text, p_openings integer, p_duplicates integer, p_plies integer, p_scored integer, p_score_min integer, p_score_max integer, p_score_mean double precision) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    INSERT INTO run_books (run_id, format, sha256, openings, duplicates, plies, scored, score_min, score_max,
                           score_mean)
    VALUES (p_run, p_format, p_sha256, p_openings, p_duplicates, p_plies, p_scored, p_score_min, p_score_max,
            p_score_mean)
$$;


--
-- Name: xqf_run_changes(bigint, text, text, text, text, text, integer, text[], text[], text[], text[], text, boolean, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_run_changes(p_run bigint, p_test_ref text, p_base_ref text, p_test_commit text, p_base_commit text, p_test_tree text, p_total integer, p_hashes text[], p_subjects text[], p_authors text[], p_dates text[], p_diff text, p_diff_cut boolean, p_name text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r runs%ROWTYPE;
BEGIN
    SELECT * INTO r FROM runs WHERE id = p_run FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM build_requests q
                    WHERE q.run_id = p_run AND q.side = 'test' AND q.git_commit = p_test_commit)
       AND NOT EXISTS (SELECT 1 FROM engine_builds b
                        WHERE b.id = r.test_build AND b.git_tree = p_test_tree) THEN
        RAISE EXCEPTION 'run % does not play commit %', p_run, p_test_commit USING ERRCODE = '22023';
    END IF;
    IF coalesce(array_length(p_hashes, 1), 0) > 100 THEN
        RAISE EXCEPTION 'at most 100 commits' USING ERRCODE = '22023';
    END IF;
    DELETE FROM run_changes WHERE run_id = p_run;
    INSERT INTO run_changes (run_id, test_ref, base_ref, test_commit, base_commit, commits_total, diff, diff_cut)
    VALUES (p_run, p_test_ref, p_base_ref, p_test_commit, p_base_commit, p_total, p_diff, p_diff_cut);
    INSERT INTO run_commits (run_id, n, hash, subject, author, at)
    SELECT p_run, u.i - 1, u.hash, left(u.subject, 512), left(u.author, 255), left(u.at, 40)
      FROM unnest(p_hashes, p_subjects, p_authors, p_dates) WITH ORDINALITY AS u(hash, subject, author, at, i);
    IF coalesce(p_name, '') <> '' AND (r.name = '' OR r.name = p_test_ref || ' vs ' || p_base_ref) THEN
        UPDATE runs SET name = left(p_name, 511) WHERE id = p_run;
    END IF;
    RETURN true;
END $$;


--
-- Name: xqf_run_progress_notify(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_run_progress_notify() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_notify('xqf_run_progress', NEW.id::text);
    RETURN NULL;
END $$;


--
-- Name: xqf_runs_notify(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_runs_notify() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_notify('xqf_runs', NEW.id::text);
    RETURN NULL;
END $$;


--
-- Name: xqf_runs_progress(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_runs_progress() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO run_progress (run_id, pairs, wins, draws, losses, ll, ld, dd, wd, ww)
         VALUES (NEW.id, NEW.pairs, NEW.wins, NEW.draws, NEW.losses, NEW.ll, NEW.ld, NEW.dd, NEW.wd, NEW.ww)
    ON CONFLICT (run_id, pairs) DO NOTHING;
    RETURN NULL;
END $$;


--
-- Name: xqf_session_add(text, bigint, text, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_session_add(p_token_hash text, p_user bigint, p_csrf text, p_ttl_s bigint) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    INSERT INTO web_sessions (token_hash, user_id, csrf, expires_at)
    VALUES (p_token_hash, p_user, p_csrf, now() + p_ttl_s * interval '1 second')
$$;


--
-- Name: xqf_session_end(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_session_end(p_token_hash text) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    DELETE FROM web_sessions WHERE token_hash = p_token_hash OR expires_at < now()
$$;


--
-- Name: xqf_set_run_limits(bigint, integer, bigint, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_set_run_limits(p_run bigint, p_priority integer, p_max_pairs bigint, p_pairs_per_task integer) RETURNS integer
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    WITH u AS (
        UPDATE runs SET priority = p_priority, max_pairs = p_max_pairs, pairs_per_task = p_pairs_per_task
         WHERE id = p_run AND state IN ('active', 'pending', 'building')
        RETURNING 1)
    SELECT count(*)::integer FROM u
$$;


--
-- Name: xqf_sign_next(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_sign_next() RETURNS TABLE(id bigint, sha256 text, build_id text)
    LANGUAGE sql
    AS $$
    SELECT b.id, b.sha256, b.build_id FROM engine_builds b JOIN runs r ON b.id IN (r.test_build, r.base_build)
     WHERE r.state = 'building' AND b.signature IS NULL AND b.blob IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM build_requests q WHERE q.run_id = r.id AND q.state <> 'done')
     ORDER BY b.id LIMIT 1
$$;


--
-- Name: xqf_spsa_claim_update(bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_spsa_claim_update(p_task bigint) RETURNS boolean
    LANGUAGE sql
    AS $$
    WITH t AS (
        UPDATE tasks SET spsa_applied_at = now()
         WHERE id = p_task AND state = 'done' AND spsa_applied_at IS NULL AND perturbation IS NOT NULL
        RETURNING id)
    SELECT EXISTS (SELECT 1 FROM t)
$$;


--
-- Name: xqf_spsa_set(bigint, boolean); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_spsa_set(p_run bigint, p_start boolean) RETURNS text
    LANGUAGE sql STABLE
    AS $$
    SELECT concat_ws(',', nullif(r.params0, ''),
                     (SELECT string_agg(p.name || '=' || round(CASE WHEN p_start THEN p.start ELSE p.theta END)::bigint,
                                        ',' ORDER BY p.idx)
                        FROM run_params p WHERE p.run_id = r.id))
      FROM runs r WHERE r.id = p_run
$$;


--
-- Name: xqf_stop_run(bigint, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_stop_run(p_run bigint, p_actor text) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    UPDATE runs SET state = 'stopped', verdict = 'stopped by ' || p_actor, finished_at = now()
     WHERE id = p_run AND state IN ('pending', 'building');
    IF FOUND OR xqf_finish_run(p_run, 'stopped', 'stopped by ' || p_actor, NULL) THEN
        RETURN NULL;
    END IF;
    RETURN format('has ended (%s)', coalesce((SELECT state FROM runs WHERE id = p_run), 'gone'));
END $$;


--
-- Name: xqf_sum(bigint[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_sum(a bigint[]) RETURNS bigint
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT coalesce(sum(x), 0)::bigint FROM unnest(a) AS x $$;


--
-- Name: xqf_user_add(text, text, text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.xqf_user_add(p_name text, p_role text, p_pwhash text, p_actor text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    INSERT INTO web_users (name, role, pwhash) VALUES (p_name, p_role, p_pwhash) ON CONFLICT (name) DO NOTHING;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    INSERT INTO web_audit (actor, action, detail) VALUES (p_actor, 'user add', format('%s (%s)', p_name, p_role));
    RETURN true;
END $$;


--
-- Name: xqf_add_all(bigint[]); Type: AGGREGATE; Schema: public; Owner: -
--

CREATE AGGREGATE public.xqf_add_all(bigint[]) (
    SFUNC = public.xqf_add,
    STYPE = bigint[],
    INITCOND = '{}'
);


--
-- Name: audit_secret; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.audit_secret (
    one boolean DEFAULT true NOT NULL,
    inner_pad bytea NOT NULL,
    outer_pad bytea NOT NULL,
    CONSTRAINT audit_secret_inner_pad_check CHECK ((length(inner_pad) = 64)),
    CONSTRAINT audit_secret_one_check CHECK (one),
    CONSTRAINT audit_secret_outer_pad_check CHECK ((length(outer_pad) = 64))
);


--
-- Name: build_params; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.build_params (
    build_id bigint NOT NULL,
    idx integer NOT NULL,
    name text NOT NULL,
    min integer NOT NULL,
    max integer NOT NULL,
    CONSTRAINT build_params_check CHECK ((min <= max)),
    CONSTRAINT build_params_idx_check CHECK ((idx >= 0)),
    CONSTRAINT build_params_name_check CHECK (((length(name) >= 1) AND (length(name) <= 64)))
);


--
-- Name: build_requests; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.build_requests (
    id bigint NOT NULL,
    run_id bigint NOT NULL,
    side text NOT NULL,
    ref text NOT NULL,
    state text DEFAULT 'queued'::text NOT NULL,
    build_id bigint,
    error text DEFAULT ''::text NOT NULL,
    builder text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    git_commit text,
    git_subject text DEFAULT ''::text NOT NULL,
    CONSTRAINT build_requests_git_commit_check CHECK ((git_commit ~ '^[0-9a-f]{40}([0-9a-f]{24})?$'::text)),
    CONSTRAINT build_requests_git_subject_check CHECK ((length(git_subject) <= 512)),
    CONSTRAINT build_requests_ref_check CHECK (((length(ref) >= 1) AND (length(ref) <= 255))),
    CONSTRAINT build_requests_side_check CHECK ((side = ANY (ARRAY['test'::text, 'base'::text]))),
    CONSTRAINT build_requests_state_check CHECK ((state = ANY (ARRAY['queued'::text, 'building'::text, 'done'::text, 'failed'::text])))
);


--
-- Name: build_requests_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.build_requests_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: build_requests_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.build_requests_id_seq OWNED BY public.build_requests.id;


--
-- Name: chain_stages; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.chain_stages (
    chain_id bigint NOT NULL,
    idx integer NOT NULL,
    kind text NOT NULL,
    state text DEFAULT 'waiting'::text NOT NULL,
    run_id bigint,
    build_id bigint,
    elo0 double precision,
    elo1 double precision,
    alpha double precision,
    beta double precision,
    max_pairs bigint,
    nodes bigint,
    base_ms bigint,
    inc_ms bigint,
    net_id bigint,
    epochs integer,
    batch integer,
    lambda double precision,
    lr double precision,
    detail text DEFAULT ''::text NOT NULL,
    CONSTRAINT chain_stages_batch_check CHECK ((batch > 0)),
    CONSTRAINT chain_stages_epochs_check CHECK ((epochs > 0)),
    CONSTRAINT chain_stages_idx_check CHECK ((idx >= 0)),
    CONSTRAINT chain_stages_kind_check CHECK ((kind = ANY (ARRAY['spsa'::text, 'build'::text, 'sprt'::text, 'data'::text, 'train'::text, 'net'::text]))),
    CONSTRAINT chain_stages_lambda_check CHECK (((lambda >= (0)::double precision) AND (lambda <= (1)::double precision))),
    CONSTRAINT chain_stages_lr_check CHECK ((lr > (0)::double precision)),
    CONSTRAINT chain_stages_state_check CHECK ((state = ANY (ARRAY['waiting'::text, 'running'::text, 'passed'::text, 'failed'::text, 'stopped'::text, 'cancelled'::text])))
);


--
-- Name: chains; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.chains (
    id bigint NOT NULL,
    name text DEFAULT ''::text NOT NULL,
    state text DEFAULT 'active'::text NOT NULL,
    note text DEFAULT ''::text NOT NULL,
    base_build bigint,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    base_net bigint,
    base_hce boolean DEFAULT false NOT NULL,
    CONSTRAINT chains_base_net_or_hce CHECK ((NOT (base_hce AND (base_net IS NOT NULL)))),
    CONSTRAINT chains_state_check CHECK ((state = ANY (ARRAY['active'::text, 'passed'::text, 'failed'::text, 'stopped'::text])))
);


--
-- Name: chains_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.chains_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: chains_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.chains_id_seq OWNED BY public.chains.id;


--
-- Name: contributors; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.contributors (
    worker_id bigint NOT NULL,
    name text NOT NULL,
    who text NOT NULL,
    concurrency integer NOT NULL,
    cpu_hours double precision NOT NULL,
    pairs bigint NOT NULL,
    tasks bigint NOT NULL,
    crashes bigint NOT NULL,
    time_losses bigint NOT NULL,
    seen timestamp with time zone NOT NULL
);


--
-- Name: contributors_made; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.contributors_made (
    one boolean DEFAULT true NOT NULL,
    as_of timestamp with time zone NOT NULL,
    CONSTRAINT contributors_made_one_check CHECK (one)
);


--
-- Name: engine_builds; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.engine_builds (
    id bigint NOT NULL,
    sha256 text,
    build_id text NOT NULL,
    bench_nodes bigint,
    path text,
    blob bytea,
    note text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    run_id bigint,
    params_hash text,
    signature text,
    git_commit text,
    git_tree text,
    git_subject text,
    params_listed boolean DEFAULT false NOT NULL,
    net_id bigint,
    CONSTRAINT engine_builds_git_commit_check CHECK ((git_commit ~ '^[0-9a-f]{40,64}$'::text)),
    CONSTRAINT engine_builds_git_tree_check CHECK ((git_tree ~ '^[0-9a-f]{40,64}$'::text)),
    CONSTRAINT engine_builds_signature_check CHECK ((signature ~ '^[0-9a-f]{128}$'::text))
);


--
-- Name: engine_builds_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.engine_builds_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: engine_builds_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.engine_builds_id_seq OWNED BY public.engine_builds.id;


--
-- Name: engine_history; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.engine_history (
    id bigint NOT NULL,
    engine_id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    actor text NOT NULL,
    field text NOT NULL,
    old_value text,
    new_value text
);


--
-- Name: engine_history_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.engine_history_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: engine_history_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.engine_history_id_seq OWNED BY public.engine_history.id;


--
-- Name: engine_presets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.engine_presets (
    engine_id bigint NOT NULL,
    name text NOT NULL,
    settings jsonb NOT NULL,
    updated_by text NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT engine_presets_name_check CHECK ((name ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$'::text)),
    CONSTRAINT engine_presets_settings_check CHECK ((jsonb_typeof(settings) = 'object'::text))
);


--
-- Name: engines; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.engines (
    id bigint NOT NULL,
    name text NOT NULL,
    repo text NOT NULL,
    build_command text,
    cmake_target text,
    binary_path text NOT NULL,
    bench_command text,
    bench_nodes_re text DEFAULT 'Nodes searched *: *([0-9]+)'::text NOT NULL,
    bench_nps_re text DEFAULT 'Nodes/second *: *([0-9]+)'::text NOT NULL,
    bench_depth integer DEFAULT 10 NOT NULL,
    protocol text DEFAULT 'uci'::text NOT NULL,
    ranks_from_one boolean DEFAULT false NOT NULL,
    he_letters boolean DEFAULT false NOT NULL,
    init text[] DEFAULT '{}'::text[] NOT NULL,
    hash_option text DEFAULT 'Hash'::text NOT NULL,
    threads_option text DEFAULT 'Threads'::text NOT NULL,
    net_option text DEFAULT 'EvalFile'::text NOT NULL,
    needs_net boolean DEFAULT false NOT NULL,
    ref_nps bigint DEFAULT 0 NOT NULL,
    added_by text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT engines_bench_command_check CHECK (((bench_command <> ''::text) AND (length(bench_command) <= 512) AND (bench_command !~ '[[:cntrl:]]'::text))),
    CONSTRAINT engines_bench_depth_check CHECK (((bench_depth >= 1) AND (bench_depth <= 64))),
    CONSTRAINT engines_bench_nodes_re_check CHECK ((length(bench_nodes_re) <= 512)),
    CONSTRAINT engines_bench_nps_re_check CHECK ((length(bench_nps_re) <= 512)),
    CONSTRAINT engines_binary_path_check CHECK (((binary_path <> ''::text) AND (length(binary_path) <= 512) AND (binary_path !~ '[[:cntrl:]]'::text) AND (binary_path !~ '^/'::text) AND (binary_path !~ '(^|/)\.\.(/|$)'::text))),
    CONSTRAINT engines_build_command_check CHECK (((build_command <> ''::text) AND (length(build_command) <= 512) AND (build_command !~ '[[:cntrl:]]'::text))),
    CONSTRAINT engines_check CHECK (((build_command IS NULL) <> (cmake_target IS NULL))),
    CONSTRAINT engines_check1 CHECK (((NOT needs_net) OR (net_option <> ''::text))),
    CONSTRAINT engines_cmake_target_check CHECK ((cmake_target ~ '^[A-Za-z0-9._+-]{1,64}$'::text)),
    CONSTRAINT engines_hash_option_check CHECK (((length(hash_option) <= 64) AND (hash_option !~ '[[:cntrl:]]'::text))),
    CONSTRAINT engines_init_check CHECK (((cardinality(init) <= 8) AND (array_to_string(init, ''::text) !~ '[[:cntrl:]]'::text))),
    CONSTRAINT engines_name_check CHECK ((name ~ '^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$'::text)),
    CONSTRAINT engines_net_option_check CHECK (((length(net_option) <= 64) AND (net_option !~ '[[:cntrl:]]'::text))),
    CONSTRAINT engines_protocol_check CHECK ((protocol = ANY (ARRAY['uci'::text, 'ucci'::text]))),
    CONSTRAINT engines_ref_nps_check CHECK (((ref_nps >= 0) AND (ref_nps <= '1099511627776'::bigint))),
    CONSTRAINT engines_repo_check CHECK (((repo <> ''::text) AND (length(repo) <= 512) AND (repo !~ '[[:cntrl:]]'::text))),
    CONSTRAINT engines_threads_option_check CHECK (((length(threads_option) <= 64) AND (threads_option !~ '[[:cntrl:]]'::text)))
);


--
-- Name: engines_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.engines_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: engines_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.engines_id_seq OWNED BY public.engines.id;


--
-- Name: game_fens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.game_fens (
    id integer NOT NULL,
    fen text NOT NULL
);


--
-- Name: game_fens_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.game_fens ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.game_fens_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: games; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.games (
    run_id bigint NOT NULL,
    game bigint NOT NULL,
    worker_id integer NOT NULL,
    fen_id integer NOT NULL,
    record bytea NOT NULL,
    CONSTRAINT games_game_check CHECK ((game >= 0))
);


--
-- Name: lease_tokens; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.lease_tokens
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: nets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.nets (
    id bigint NOT NULL,
    sha256 text NOT NULL,
    name text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    provenance text DEFAULT ''::text NOT NULL,
    bytes bytea NOT NULL,
    signature text,
    added_by text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    approved boolean DEFAULT true NOT NULL,
    approved_by text DEFAULT ''::text NOT NULL,
    approved_at timestamp with time zone,
    CONSTRAINT nets_name_check CHECK ((name ~ '^[!-~]{1,64}$'::text)),
    CONSTRAINT nets_sha256_check CHECK ((sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT nets_signature_check CHECK ((signature ~ '^[0-9a-f]{128}$'::text))
);


--
-- Name: nets_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.nets_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: nets_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.nets_id_seq OWNED BY public.nets.id;


--
-- Name: progression_points; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.progression_points (
    progression_id bigint NOT NULL,
    run_id bigint NOT NULL,
    ref text NOT NULL,
    git_commit text,
    committed_at timestamp with time zone,
    subject text DEFAULT ''::text NOT NULL,
    CONSTRAINT progression_points_git_commit_check CHECK ((git_commit ~ '^[0-9a-f]{40}([0-9a-f]{24})?$'::text)),
    CONSTRAINT progression_points_ref_check CHECK (((length(ref) >= 1) AND (length(ref) <= 255))),
    CONSTRAINT progression_points_subject_check CHECK ((length(subject) <= 512))
);


--
-- Name: progressions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.progressions (
    id bigint NOT NULL,
    name text NOT NULL,
    engine text NOT NULL,
    base_ref text NOT NULL,
    base_commit text,
    base_date timestamp with time zone,
    base_subject text DEFAULT ''::text NOT NULL,
    created_by text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT progressions_base_commit_check CHECK ((base_commit ~ '^[0-9a-f]{40}([0-9a-f]{24})?$'::text)),
    CONSTRAINT progressions_base_ref_check CHECK (((length(base_ref) >= 1) AND (length(base_ref) <= 255))),
    CONSTRAINT progressions_base_subject_check CHECK ((length(base_subject) <= 512)),
    CONSTRAINT progressions_name_check CHECK ((((length(name) >= 1) AND (length(name) <= 200)) AND (name !~ '[[:cntrl:]]'::text)))
);


--
-- Name: progressions_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.progressions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: progressions_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.progressions_id_seq OWNED BY public.progressions.id;


--
-- Name: replay_audits_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.replay_audits_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: replay_audits_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.replay_audits_id_seq OWNED BY public.replay_audits.id;


--
-- Name: results; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.results (
    task_id bigint NOT NULL,
    lease_token bigint NOT NULL,
    worker_id bigint,
    base_pairs bigint NOT NULL,
    pairs bigint DEFAULT 0 NOT NULL,
    wins bigint DEFAULT 0 NOT NULL,
    draws bigint DEFAULT 0 NOT NULL,
    losses bigint DEFAULT 0 NOT NULL,
    ll bigint DEFAULT 0 NOT NULL,
    ld bigint DEFAULT 0 NOT NULL,
    dd bigint DEFAULT 0 NOT NULL,
    wd bigint DEFAULT 0 NOT NULL,
    ww bigint DEFAULT 0 NOT NULL,
    reasons bigint[] DEFAULT '{}'::bigint[] NOT NULL,
    reports integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    expired boolean DEFAULT false NOT NULL,
    purged boolean DEFAULT false NOT NULL
);


--
-- Name: role_grants; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.role_grants (
    role text NOT NULL,
    kind text NOT NULL,
    object text NOT NULL,
    privileges text NOT NULL,
    CONSTRAINT role_grants_kind_check CHECK ((kind = ANY (ARRAY['table'::text, 'sequence'::text, 'function'::text]))),
    CONSTRAINT role_grants_role_check CHECK ((role = ANY (ARRAY['xqf_coordinator'::text, 'xqf_web'::text, 'xqf_builder'::text, 'xqf_signer'::text, 'xqf_auditor'::text])))
);


--
-- Name: run_books; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.run_books (
    run_id bigint NOT NULL,
    format text NOT NULL,
    sha256 text NOT NULL,
    openings integer NOT NULL,
    duplicates integer DEFAULT 0 NOT NULL,
    plies integer DEFAULT 0 NOT NULL,
    scored integer DEFAULT 0 NOT NULL,
    score_min integer DEFAULT 0 NOT NULL,
    score_max integer DEFAULT 0 NOT NULL,
    score_mean double precision DEFAULT 0 NOT NULL,
    CONSTRAINT run_books_check CHECK (((scored >= 0) AND (scored <= openings))),
    CONSTRAINT run_books_duplicates_check CHECK ((duplicates >= 0)),
    CONSTRAINT run_books_format_check CHECK ((format = ANY (ARRAY['book'::text, 'fen'::text, 'epd'::text, 'pgn'::text]))),
    CONSTRAINT run_books_openings_check CHECK ((openings > 0)),
    CONSTRAINT run_books_plies_check CHECK ((plies >= 0)),
    CONSTRAINT run_books_sha256_check CHECK ((sha256 ~ '^[0-9a-f]{64}$'::text))
);


--
-- Name: run_changes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.run_changes (
    run_id bigint NOT NULL,
    test_ref text NOT NULL,
    base_ref text NOT NULL,
    test_commit text NOT NULL,
    base_commit text NOT NULL,
    commits_total integer NOT NULL,
    diff text NOT NULL,
    diff_cut boolean NOT NULL,
    recorded_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT run_changes_base_commit_check CHECK ((base_commit ~ '^[0-9a-f]{40}([0-9a-f]{24})?$'::text)),
    CONSTRAINT run_changes_base_ref_check CHECK (((length(base_ref) >= 1) AND (length(base_ref) <= 255))),
    CONSTRAINT run_changes_commits_total_check CHECK ((commits_total >= 0)),
    CONSTRAINT run_changes_diff_check CHECK ((octet_length(diff) <= 262144)),
    CONSTRAINT run_changes_test_commit_check CHECK ((test_commit ~ '^[0-9a-f]{40}([0-9a-f]{24})?$'::text)),
    CONSTRAINT run_changes_test_ref_check CHECK (((length(test_ref) >= 1) AND (length(test_ref) <= 255)))
);


--
-- Name: run_commits; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.run_commits (
    run_id bigint NOT NULL,
    n integer NOT NULL,
    hash text NOT NULL,
    subject text NOT NULL,
    author text NOT NULL,
    at text NOT NULL,
    CONSTRAINT run_commits_at_check CHECK ((length(at) <= 40)),
    CONSTRAINT run_commits_author_check CHECK ((length(author) <= 255)),
    CONSTRAINT run_commits_hash_check CHECK ((hash ~ '^[0-9a-f]{40}([0-9a-f]{24})?$'::text)),
    CONSTRAINT run_commits_n_check CHECK (((n >= 0) AND (n <= 99))),
    CONSTRAINT run_commits_subject_check CHECK ((length(subject) <= 512))
);


--
-- Name: run_param_history; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.run_param_history (
    run_id bigint NOT NULL,
    iteration bigint NOT NULL,
    idx integer NOT NULL,
    theta double precision NOT NULL,
    recorded_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: run_params; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.run_params (
    run_id bigint NOT NULL,
    idx integer NOT NULL,
    name text NOT NULL,
    start double precision NOT NULL,
    min double precision NOT NULL,
    max double precision NOT NULL,
    c_end double precision NOT NULL,
    r_end double precision NOT NULL,
    theta double precision NOT NULL
);


--
-- Name: run_progress; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.run_progress (
    run_id bigint NOT NULL,
    pairs bigint NOT NULL,
    wins bigint NOT NULL,
    draws bigint NOT NULL,
    losses bigint NOT NULL,
    ll bigint NOT NULL,
    ld bigint NOT NULL,
    dd bigint NOT NULL,
    wd bigint NOT NULL,
    ww bigint NOT NULL,
    recorded_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: run_setting_columns; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.run_setting_columns (
    name text NOT NULL
);


--
-- Name: runs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.runs (
    id bigint NOT NULL,
    kind text NOT NULL,
    state text DEFAULT 'active'::text NOT NULL,
    priority integer DEFAULT 0 NOT NULL,
    name text DEFAULT ''::text NOT NULL,
    name0 text DEFAULT 'test'::text NOT NULL,
    params0 text DEFAULT ''::text NOT NULL,
    name1 text DEFAULT 'base'::text NOT NULL,
    params1 text DEFAULT ''::text NOT NULL,
    build_id text DEFAULT ''::text NOT NULL,
    base_build bigint,
    test_build bigint,
    book_name text DEFAULT ''::text NOT NULL,
    book text[] NOT NULL,
    seed bigint DEFAULT 1 NOT NULL,
    nodes bigint DEFAULT 0 NOT NULL,
    base_ms bigint DEFAULT 0 NOT NULL,
    inc_ms bigint DEFAULT 0 NOT NULL,
    margin_ms bigint DEFAULT 100 NOT NULL,
    hash_mb integer DEFAULT 16 NOT NULL,
    pairs_per_task integer NOT NULL,
    max_pairs bigint NOT NULL,
    elo0 double precision,
    elo1 double precision,
    alpha double precision,
    beta double precision,
    settings jsonb DEFAULT '{}'::jsonb NOT NULL,
    next_pair bigint DEFAULT 0 NOT NULL,
    pairs bigint DEFAULT 0 NOT NULL,
    wins bigint DEFAULT 0 NOT NULL,
    draws bigint DEFAULT 0 NOT NULL,
    losses bigint DEFAULT 0 NOT NULL,
    ll bigint DEFAULT 0 NOT NULL,
    ld bigint DEFAULT 0 NOT NULL,
    dd bigint DEFAULT 0 NOT NULL,
    wd bigint DEFAULT 0 NOT NULL,
    ww bigint DEFAULT 0 NOT NULL,
    reasons bigint[] DEFAULT '{}'::bigint[] NOT NULL,
    llr double precision,
    verdict text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    iter bigint DEFAULT 0 NOT NULL,
    resign_moves bigint DEFAULT 4 NOT NULL,
    resign_score bigint DEFAULT 600 NOT NULL,
    draw_after bigint DEFAULT 40 NOT NULL,
    draw_moves bigint DEFAULT 8 NOT NULL,
    draw_score bigint DEFAULT 10 NOT NULL,
    max_plies bigint DEFAULT 0 NOT NULL,
    tasks_on_claim boolean NOT NULL,
    owner text DEFAULT ''::text NOT NULL,
    ref_nps bigint DEFAULT 0 NOT NULL,
    game_scores boolean DEFAULT false NOT NULL,
    replay_share double precision DEFAULT 0.01 NOT NULL,
    throughput integer DEFAULT 100 NOT NULL,
    base1_ms bigint DEFAULT 0 NOT NULL,
    inc1_ms bigint DEFAULT 0 NOT NULL,
    built_state text,
    test_net bigint,
    base_net bigint,
    test_hce boolean DEFAULT false NOT NULL,
    base_hce boolean DEFAULT false NOT NULL,
    threads integer DEFAULT 1 NOT NULL,
    engine text DEFAULT 'xqf'::text NOT NULL,
    base_engine text,
    CONSTRAINT runs_adjudication_range CHECK ((((resign_moves >= 0) AND (resign_moves <= 100000)) AND ((resign_score >= 0) AND (resign_score <= 100000)) AND ((draw_after >= 0) AND (draw_after <= 100000)) AND ((draw_moves >= 0) AND (draw_moves <= 100000)) AND ((draw_score >= 0) AND (draw_score <= 100000)) AND ((max_plies >= 0) AND (max_plies <= 100000)))),
    CONSTRAINT runs_base1_ms_check CHECK ((base1_ms >= 0)),
    CONSTRAINT runs_base_net_or_hce CHECK ((NOT (base_hce AND (base_net IS NOT NULL)))),
    CONSTRAINT runs_built_state_check CHECK ((built_state = ANY (ARRAY['active'::text, 'pending'::text]))),
    CONSTRAINT runs_inc1_ms_check CHECK ((inc1_ms >= 0)),
    CONSTRAINT runs_max_pairs_check CHECK ((max_pairs > 0)),
    CONSTRAINT runs_pairs_per_task_check CHECK (((pairs_per_task >= 1) AND (pairs_per_task <= 1024))),
    CONSTRAINT runs_ref_nps_check CHECK ((ref_nps >= 0)),
    CONSTRAINT runs_replay_share_check CHECK (((replay_share >= (0)::double precision) AND (replay_share <= (1)::double precision))),
    CONSTRAINT runs_state_check CHECK ((state = ANY (ARRAY['active'::text, 'paused'::text, 'finished'::text, 'stopped'::text, 'pending'::text, 'building'::text, 'failed'::text]))),
    CONSTRAINT runs_test_net_or_hce CHECK ((NOT (test_hce AND (test_net IS NOT NULL)))),
    CONSTRAINT runs_threads_check CHECK (((threads >= 1) AND (threads <= 64))),
    CONSTRAINT runs_throughput_check CHECK (((throughput >= 1) AND (throughput <= 1000)))
);


--
-- Name: runs_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.runs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: runs_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.runs_id_seq OWNED BY public.runs.id;


--
-- Name: schema_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_migrations (
    version integer NOT NULL,
    name text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: search_audit_passes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_audit_passes (
    id bigint NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    runs integer DEFAULT 0 NOT NULL,
    workers integer DEFAULT 0 NOT NULL,
    flagged integer DEFAULT 0 NOT NULL,
    CONSTRAINT search_audit_passes_flagged_check CHECK ((flagged >= 0)),
    CONSTRAINT search_audit_passes_runs_check CHECK ((runs >= 0)),
    CONSTRAINT search_audit_passes_workers_check CHECK ((workers >= 0))
);


--
-- Name: search_audit_passes_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.search_audit_passes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: search_audit_passes_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.search_audit_passes_id_seq OWNED BY public.search_audit_passes.id;


--
-- Name: search_audits; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.search_audits (
    id bigint NOT NULL,
    run_id bigint NOT NULL,
    worker_id integer NOT NULL,
    depth integer NOT NULL,
    positions bigint NOT NULL,
    agree bigint NOT NULL,
    honest double precision NOT NULL,
    llr double precision NOT NULL,
    verdict text NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    plies bigint DEFAULT 0 NOT NULL,
    CONSTRAINT search_audits_check CHECK (((agree >= 0) AND (agree <= positions))),
    CONSTRAINT search_audits_plies_check CHECK ((plies >= 0)),
    CONSTRAINT search_audits_positions_check CHECK ((positions >= 0)),
    CONSTRAINT search_audits_verdict_check CHECK ((verdict = ANY (ARRAY['clean'::text, 'undecided'::text, 'flagged'::text])))
);


--
-- Name: search_audits_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.search_audits_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: search_audits_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.search_audits_id_seq OWNED BY public.search_audits.id;


--
-- Name: tasks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tasks (
    id bigint NOT NULL,
    run_id bigint NOT NULL,
    first_pair bigint NOT NULL,
    n_pairs integer NOT NULL,
    state text DEFAULT 'queued'::text NOT NULL,
    params0 text NOT NULL,
    params1 text NOT NULL,
    perturbation jsonb,
    worker_id bigint,
    lease_token bigint,
    lease_deadline timestamp with time zone,
    attempts integer DEFAULT 0 NOT NULL,
    last_error text,
    done_pairs bigint DEFAULT 0 NOT NULL,
    wins bigint DEFAULT 0 NOT NULL,
    draws bigint DEFAULT 0 NOT NULL,
    losses bigint DEFAULT 0 NOT NULL,
    ll bigint DEFAULT 0 NOT NULL,
    ld bigint DEFAULT 0 NOT NULL,
    dd bigint DEFAULT 0 NOT NULL,
    wd bigint DEFAULT 0 NOT NULL,
    ww bigint DEFAULT 0 NOT NULL,
    reasons bigint[] DEFAULT '{}'::bigint[] NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    spsa_applied_at timestamp with time zone,
    refusals integer DEFAULT 0 NOT NULL,
    refusal_reasons text[] DEFAULT '{}'::text[] NOT NULL,
    purged_pairs bigint DEFAULT 0 NOT NULL,
    refused_by bigint[] DEFAULT '{}'::bigint[] NOT NULL,
    refused_keys text[] DEFAULT '{}'::text[] NOT NULL,
    CONSTRAINT tasks_n_pairs_check CHECK ((n_pairs > 0)),
    CONSTRAINT tasks_state_check CHECK ((state = ANY (ARRAY['queued'::text, 'leased'::text, 'done'::text, 'cancelled'::text, 'quarantined'::text])))
);


--
-- Name: tasks_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.tasks_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: tasks_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.tasks_id_seq OWNED BY public.tasks.id;


--
-- Name: web_audit; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.web_audit (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    actor text NOT NULL,
    run_id bigint,
    action text NOT NULL,
    detail text DEFAULT ''::text NOT NULL,
    chain_id bigint
);


--
-- Name: web_audit_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.web_audit_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: web_audit_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.web_audit_id_seq OWNED BY public.web_audit.id;


--
-- Name: web_sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.web_sessions (
    token_hash text NOT NULL,
    user_id bigint NOT NULL,
    csrf text NOT NULL,
    expires_at timestamp with time zone NOT NULL
);


--
-- Name: web_users; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.web_users (
    id bigint NOT NULL,
    name text NOT NULL,
    role text NOT NULL,
    pwhash text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    disabled boolean DEFAULT false NOT NULL,
    CONSTRAINT web_users_name_check CHECK ((name ~ '^[A-Za-z0-9_.-]{1,64}$'::text)),
    CONSTRAINT web_users_role_check CHECK ((role = ANY (ARRAY['viewer'::text, 'tester'::text, 'admin'::text])))
);


--
-- Name: web_users_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.web_users_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: web_users_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.web_users_id_seq OWNED BY public.web_users.id;


--
-- Name: worker_builds; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.worker_builds (
    worker_id bigint NOT NULL,
    sha256 text NOT NULL,
    bench_nodes bigint NOT NULL,
    nps bigint NOT NULL,
    refused text,
    measured_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT worker_builds_sha256_check CHECK (((sha256 = ''::text) OR (sha256 ~ '^[0-9a-f]{64}$'::text)))
);


--
-- Name: workers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.workers (
    id bigint NOT NULL,
    name text NOT NULL,
    build_id text DEFAULT ''::text NOT NULL,
    cores integer DEFAULT 0 NOT NULL,
    concurrency integer DEFAULT 0 NOT NULL,
    first_seen timestamp with time zone DEFAULT now() NOT NULL,
    last_seen timestamp with time zone DEFAULT now() NOT NULL,
    auth_name text
);


--
-- Name: workers_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.workers_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: workers_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.workers_id_seq OWNED BY public.workers.id;


--
-- Name: build_requests id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.build_requests ALTER COLUMN id SET DEFAULT nextval('public.build_requests_id_seq'::regclass);


--
-- Name: chains id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chains ALTER COLUMN id SET DEFAULT nextval('public.chains_id_seq'::regclass);


--
-- Name: engine_builds id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.engine_builds ALTER COLUMN id SET DEFAULT nextval('public.engine_builds_id_seq'::regclass);


--
-- Name: engine_history id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.engine_history ALTER COLUMN id SET DEFAULT nextval('public.engine_history_id_seq'::regclass);


--
-- Name: engines id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.engines ALTER COLUMN id SET DEFAULT nextval('public.engines_id_seq'::regclass);


--
-- Name: nets id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.nets ALTER COLUMN id SET DEFAULT nextval('public.nets_id_seq'::regclass);


--
-- Name: progressions id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.progressions ALTER COLUMN id SET DEFAULT nextval('public.progressions_id_seq'::regclass);


--
-- Name: replay_audits id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.replay_audits ALTER COLUMN id SET DEFAULT nextval('public.replay_audits_id_seq'::regclass);


--
-- Name: runs id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runs ALTER COLUMN id SET DEFAULT nextval('public.runs_id_seq'::regclass);


--
-- Name: search_audit_passes id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_audit_passes ALTER COLUMN id SET DEFAULT nextval('public.search_audit_passes_id_seq'::regclass);


--
-- Name: search_audits id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_audits ALTER COLUMN id SET DEFAULT nextval('public.search_audits_id_seq'::regclass);


--
-- Name: tasks id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tasks ALTER COLUMN id SET DEFAULT nextval('public.tasks_id_seq'::regclass);


--
-- Name: web_audit id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.web_audit ALTER COLUMN id SET DEFAULT nextval('public.web_audit_id_seq'::regclass);


--
-- Name: web_users id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.web_users ALTER COLUMN id SET DEFAULT nextval('public.web_users_id_seq'::regclass);


--
-- Name: workers id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workers ALTER COLUMN id SET DEFAULT nextval('public.workers_id_seq'::regclass);


--
-- Name: audit_secret audit_secret_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_secret
    ADD CONSTRAINT audit_secret_pkey PRIMARY KEY (one);


--
-- Name: build_params build_params_build_id_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.build_params
    ADD CONSTRAINT build_params_build_id_name_key UNIQUE (build_id, name);


--
-- Name: build_params build_params_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.build_params
    ADD CONSTRAINT build_params_pkey PRIMARY KEY (build_id, idx);


--
-- Name: build_requests build_requests_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.build_requests
    ADD CONSTRAINT build_requests_pkey PRIMARY KEY (id);


--
-- Name: build_requests build_requests_run_id_side_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.build_requests
    ADD CONSTRAINT build_requests_run_id_side_key UNIQUE (run_id, side);


--
-- Name: chain_stages chain_stages_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chain_stages
    ADD CONSTRAINT chain_stages_pkey PRIMARY KEY (chain_id, idx);


--
-- Name: chains chains_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chains
    ADD CONSTRAINT chains_pkey PRIMARY KEY (id);


--
-- Name: contributors_made contributors_made_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.contributors_made
    ADD CONSTRAINT contributors_made_pkey PRIMARY KEY (one);


--
-- Name: contributors contributors_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.contributors
    ADD CONSTRAINT contributors_pkey PRIMARY KEY (worker_id);


--
-- Name: engine_builds engine_builds_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.engine_builds
    ADD CONSTRAINT engine_builds_pkey PRIMARY KEY (id);


--
-- Name: engine_builds engine_builds_sha256_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.engine_builds
    ADD CONSTRAINT engine_builds_sha256_key UNIQUE (sha256);


--
-- Name: engine_history engine_history_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.engine_history
    ADD CONSTRAINT engine_history_pkey PRIMARY KEY (id);


--
-- Name: engine_presets engine_presets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.engine_presets
    ADD CONSTRAINT engine_presets_pkey PRIMARY KEY (engine_id, name);


--
-- Name: engines engines_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.engines
    ADD CONSTRAINT engines_name_key UNIQUE (name);


--
-- Name: engines engines_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.engines
    ADD CONSTRAINT engines_pkey PRIMARY KEY (id);


--
-- Name: game_fens game_fens_fen_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.game_fens
    ADD CONSTRAINT game_fens_fen_key UNIQUE (fen);


--
-- Name: game_fens game_fens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.game_fens
    ADD CONSTRAINT game_fens_pkey PRIMARY KEY (id);


--
-- Name: games games_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.games
    ADD CONSTRAINT games_pkey PRIMARY KEY (run_id, game);


--
-- Name: nets nets_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.nets
    ADD CONSTRAINT nets_name_key UNIQUE (name);


--
-- Name: nets nets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.nets
    ADD CONSTRAINT nets_pkey PRIMARY KEY (id);


--
-- Name: nets nets_sha256_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.nets
    ADD CONSTRAINT nets_sha256_key UNIQUE (sha256);


--
-- Name: progression_points progression_points_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.progression_points
    ADD CONSTRAINT progression_points_pkey PRIMARY KEY (progression_id, run_id);


--
-- Name: progression_points progression_points_progression_id_git_commit_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.progression_points
    ADD CONSTRAINT progression_points_progression_id_git_commit_key UNIQUE (progression_id, git_commit);


--
-- Name: progression_points progression_points_run_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.progression_points
    ADD CONSTRAINT progression_points_run_id_key UNIQUE (run_id);


--
-- Name: progressions progressions_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.progressions
    ADD CONSTRAINT progressions_name_key UNIQUE (name);


--
-- Name: progressions progressions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.progressions
    ADD CONSTRAINT progressions_pkey PRIMARY KEY (id);


--
-- Name: replay_audits replay_audits_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.replay_audits
    ADD CONSTRAINT replay_audits_pkey PRIMARY KEY (id);


--
-- Name: replay_audits replay_audits_run_id_pair_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.replay_audits
    ADD CONSTRAINT replay_audits_run_id_pair_key UNIQUE (run_id, pair);


--
-- Name: results results_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.results
    ADD CONSTRAINT results_pkey PRIMARY KEY (task_id, lease_token);


--
-- Name: role_grants role_grants_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.role_grants
    ADD CONSTRAINT role_grants_pkey PRIMARY KEY (role, kind, object);


--
-- Name: run_books run_books_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_books
    ADD CONSTRAINT run_books_pkey PRIMARY KEY (run_id);


--
-- Name: run_changes run_changes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_changes
    ADD CONSTRAINT run_changes_pkey PRIMARY KEY (run_id);


--
-- Name: run_commits run_commits_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_commits
    ADD CONSTRAINT run_commits_pkey PRIMARY KEY (run_id, n);


--
-- Name: run_param_history run_param_history_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_param_history
    ADD CONSTRAINT run_param_history_pkey PRIMARY KEY (run_id, iteration, idx);


--
-- Name: run_params run_params_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_params
    ADD CONSTRAINT run_params_pkey PRIMARY KEY (run_id, idx);


--
-- Name: run_params run_params_run_id_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_params
    ADD CONSTRAINT run_params_run_id_name_key UNIQUE (run_id, name);


--
-- Name: run_progress run_progress_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_progress
    ADD CONSTRAINT run_progress_pkey PRIMARY KEY (run_id, pairs);


--
-- Name: run_setting_columns run_setting_columns_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_setting_columns
    ADD CONSTRAINT run_setting_columns_pkey PRIMARY KEY (name);


--
-- Name: runs runs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_pkey PRIMARY KEY (id);


--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);


--
-- Name: search_audit_passes search_audit_passes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_audit_passes
    ADD CONSTRAINT search_audit_passes_pkey PRIMARY KEY (id);


--
-- Name: search_audits search_audits_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_audits
    ADD CONSTRAINT search_audits_pkey PRIMARY KEY (id);


--
-- Name: tasks tasks_lease_token_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tasks
    ADD CONSTRAINT tasks_lease_token_key UNIQUE (lease_token);


--
-- Name: tasks tasks_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tasks
    ADD CONSTRAINT tasks_pkey PRIMARY KEY (id);


--
-- Name: web_audit web_audit_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.web_audit
    ADD CONSTRAINT web_audit_pkey PRIMARY KEY (id);


--
-- Name: web_sessions web_sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.web_sessions
    ADD CONSTRAINT web_sessions_pkey PRIMARY KEY (token_hash);


--
-- Name: web_users web_users_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.web_users
    ADD CONSTRAINT web_users_name_key UNIQUE (name);


--
-- Name: web_users web_users_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.web_users
    ADD CONSTRAINT web_users_pkey PRIMARY KEY (id);


--
-- Name: worker_builds worker_builds_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.worker_builds
    ADD CONSTRAINT worker_builds_pkey PRIMARY KEY (worker_id, sha256);


--
-- Name: workers workers_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workers
    ADD CONSTRAINT workers_name_key UNIQUE (name);


--
-- Name: workers workers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workers
    ADD CONSTRAINT workers_pkey PRIMARY KEY (id);


--
-- Name: build_requests_open; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX build_requests_open ON public.build_requests USING btree (id) WHERE (state = ANY (ARRAY['queued'::text, 'building'::text]));


--
-- Name: chain_stages_run; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX chain_stages_run ON public.chain_stages USING btree (run_id);


--
-- Name: engine_builds_run; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX engine_builds_run ON public.engine_builds USING btree (run_id);


--
-- Name: engine_builds_tree; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX engine_builds_tree ON public.engine_builds USING btree (git_tree);


--
-- Name: engine_history_engine; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX engine_history_engine ON public.engine_history USING btree (engine_id, id);


--
-- Name: replay_audits_arbiter_open; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX replay_audits_arbiter_open ON public.replay_audits USING btree (id) WHERE (arbiter = ANY (ARRAY['pending'::text, 'leased'::text]));


--
-- Name: replay_audits_open; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX replay_audits_open ON public.replay_audits USING btree (id) WHERE (state = ANY (ARRAY['pending'::text, 'leased'::text]));


--
-- Name: results_worker; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX results_worker ON public.results USING btree (worker_id);


--
-- Name: runs_active; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_active ON public.runs USING btree (priority DESC, id) WHERE (state = 'active'::text);


--
-- Name: runs_base_net; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_base_net ON public.runs USING btree (base_net) WHERE (base_net IS NOT NULL);


--
-- Name: runs_owner; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_owner ON public.runs USING btree (owner, id);


--
-- Name: runs_test_net; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_test_net ON public.runs USING btree (test_net) WHERE (test_net IS NOT NULL);


--
-- Name: search_audits_run; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX search_audits_run ON public.search_audits USING btree (run_id, worker_id, id);


--
-- Name: tasks_leased_run; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tasks_leased_run ON public.tasks USING btree (run_id) WHERE (state = 'leased'::text);


--
-- Name: tasks_leased_worker; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tasks_leased_worker ON public.tasks USING btree (worker_id) WHERE (state = 'leased'::text);


--
-- Name: tasks_quarantined; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tasks_quarantined ON public.tasks USING btree (run_id) WHERE (state = 'quarantined'::text);


--
-- Name: tasks_queued; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tasks_queued ON public.tasks USING btree (run_id, id) WHERE (state = 'queued'::text);


--
-- Name: tasks_run; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tasks_run ON public.tasks USING btree (run_id);


--
-- Name: web_audit_chain; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX web_audit_chain ON public.web_audit USING btree (chain_id, id) WHERE (chain_id IS NOT NULL);


--
-- Name: web_audit_run; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX web_audit_run ON public.web_audit USING btree (run_id, id);


--
-- Name: web_sessions_expiry; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX web_sessions_expiry ON public.web_sessions USING btree (expires_at);


--
-- Name: workers_auth_name; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX workers_auth_name ON public.workers USING btree (auth_name);


--
-- Name: build_requests build_requests_notify; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER build_requests_notify AFTER UPDATE OF state ON public.build_requests FOR EACH ROW EXECUTE FUNCTION public.xqf_build_request_notify();


--
-- Name: engine_builds engine_builds_renamed; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER engine_builds_renamed BEFORE UPDATE OF build_id ON public.engine_builds FOR EACH ROW EXECUTE FUNCTION public.xqf_build_renamed();


--
-- Name: engines engines_changed; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER engines_changed AFTER UPDATE ON public.engines FOR EACH ROW EXECUTE FUNCTION public.xqf_engine_changed();


--
-- Name: runs runs_chain; Type: TRIGGER; Schema: public; Owner: -
--

CREATE CONSTRAINT TRIGGER runs_chain AFTER UPDATE OF state ON public.runs DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (((new.state = ANY (ARRAY['finished'::text, 'stopped'::text])) AND (old.state IS DISTINCT FROM new.state))) EXECUTE FUNCTION public.xqf_chain_run_ended();


--
-- Name: runs runs_chain_theta; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER runs_chain_theta AFTER UPDATE OF iter ON public.runs FOR EACH ROW WHEN (((new.kind = 'spsa'::text) AND (new.state <> 'active'::text))) EXECUTE FUNCTION public.xqf_chain_theta();


--
-- Name: runs runs_notify; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER runs_notify AFTER INSERT OR UPDATE OF state, priority, throughput, max_pairs ON public.runs FOR EACH ROW EXECUTE FUNCTION public.xqf_runs_notify();


--
-- Name: runs runs_progress; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER runs_progress AFTER UPDATE OF pairs ON public.runs FOR EACH ROW WHEN ((new.pairs > old.pairs)) EXECUTE FUNCTION public.xqf_runs_progress();


--
-- Name: runs runs_progress_notify; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER runs_progress_notify AFTER UPDATE OF pairs, iter, llr, state ON public.runs FOR EACH ROW EXECUTE FUNCTION public.xqf_run_progress_notify();


--
-- Name: build_params build_params_build_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.build_params
    ADD CONSTRAINT build_params_build_id_fkey FOREIGN KEY (build_id) REFERENCES public.engine_builds(id) ON DELETE CASCADE;


--
-- Name: build_requests build_requests_build_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.build_requests
    ADD CONSTRAINT build_requests_build_id_fkey FOREIGN KEY (build_id) REFERENCES public.engine_builds(id);


--
-- Name: build_requests build_requests_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.build_requests
    ADD CONSTRAINT build_requests_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id) ON DELETE CASCADE;


--
-- Name: chain_stages chain_stages_build_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chain_stages
    ADD CONSTRAINT chain_stages_build_id_fkey FOREIGN KEY (build_id) REFERENCES public.engine_builds(id);


--
-- Name: chain_stages chain_stages_chain_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chain_stages
    ADD CONSTRAINT chain_stages_chain_id_fkey FOREIGN KEY (chain_id) REFERENCES public.chains(id) ON DELETE CASCADE;


--
-- Name: chain_stages chain_stages_net_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chain_stages
    ADD CONSTRAINT chain_stages_net_id_fkey FOREIGN KEY (net_id) REFERENCES public.nets(id);


--
-- Name: chain_stages chain_stages_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chain_stages
    ADD CONSTRAINT chain_stages_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id);


--
-- Name: chains chains_base_build_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chains
    ADD CONSTRAINT chains_base_build_fkey FOREIGN KEY (base_build) REFERENCES public.engine_builds(id);


--
-- Name: chains chains_base_net_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chains
    ADD CONSTRAINT chains_base_net_fkey FOREIGN KEY (base_net) REFERENCES public.nets(id);


--
-- Name: engine_builds engine_builds_net_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.engine_builds
    ADD CONSTRAINT engine_builds_net_id_fkey FOREIGN KEY (net_id) REFERENCES public.nets(id);


--
-- Name: engine_builds engine_builds_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.engine_builds
    ADD CONSTRAINT engine_builds_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id) ON DELETE SET NULL;


--
-- Name: engine_history engine_history_engine_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.engine_history
    ADD CONSTRAINT engine_history_engine_id_fkey FOREIGN KEY (engine_id) REFERENCES public.engines(id) ON DELETE CASCADE;


--
-- Name: engine_presets engine_presets_engine_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.engine_presets
    ADD CONSTRAINT engine_presets_engine_id_fkey FOREIGN KEY (engine_id) REFERENCES public.engines(id) ON DELETE CASCADE;


--
-- Name: games games_fen_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.games
    ADD CONSTRAINT games_fen_id_fkey FOREIGN KEY (fen_id) REFERENCES public.game_fens(id);


--
-- Name: games games_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.games
    ADD CONSTRAINT games_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id) ON DELETE CASCADE;


--
-- Name: progression_points progression_points_progression_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.progression_points
    ADD CONSTRAINT progression_points_progression_id_fkey FOREIGN KEY (progression_id) REFERENCES public.progressions(id) ON DELETE CASCADE;


--
-- Name: progression_points progression_points_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.progression_points
    ADD CONSTRAINT progression_points_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id);


--
-- Name: replay_audits replay_audits_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.replay_audits
    ADD CONSTRAINT replay_audits_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id) ON DELETE CASCADE;


--
-- Name: results results_task_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.results
    ADD CONSTRAINT results_task_id_fkey FOREIGN KEY (task_id) REFERENCES public.tasks(id) ON DELETE CASCADE;


--
-- Name: results results_worker_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.results
    ADD CONSTRAINT results_worker_id_fkey FOREIGN KEY (worker_id) REFERENCES public.workers(id);


--
-- Name: run_books run_books_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_books
    ADD CONSTRAINT run_books_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id) ON DELETE CASCADE;


--
-- Name: run_changes run_changes_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_changes
    ADD CONSTRAINT run_changes_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id) ON DELETE CASCADE;


--
-- Name: run_commits run_commits_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_commits
    ADD CONSTRAINT run_commits_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.run_changes(run_id) ON DELETE CASCADE;


--
-- Name: run_param_history run_param_history_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_param_history
    ADD CONSTRAINT run_param_history_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id) ON DELETE CASCADE;


--
-- Name: run_params run_params_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_params
    ADD CONSTRAINT run_params_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id) ON DELETE CASCADE;


--
-- Name: run_progress run_progress_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_progress
    ADD CONSTRAINT run_progress_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id) ON DELETE CASCADE;


--
-- Name: runs runs_base_build_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_base_build_fkey FOREIGN KEY (base_build) REFERENCES public.engine_builds(id);


--
-- Name: runs runs_base_engine_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_base_engine_fkey FOREIGN KEY (base_engine) REFERENCES public.engines(name) ON UPDATE CASCADE;


--
-- Name: runs runs_base_net_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_base_net_fkey FOREIGN KEY (base_net) REFERENCES public.nets(id);


--
-- Name: runs runs_engine_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_engine_fkey FOREIGN KEY (engine) REFERENCES public.engines(name) ON UPDATE CASCADE;


--
-- Name: runs runs_test_build_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_test_build_fkey FOREIGN KEY (test_build) REFERENCES public.engine_builds(id);


--
-- Name: runs runs_test_net_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_test_net_fkey FOREIGN KEY (test_net) REFERENCES public.nets(id);


--
-- Name: search_audits search_audits_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.search_audits
    ADD CONSTRAINT search_audits_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id) ON DELETE CASCADE;


--
-- Name: tasks tasks_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tasks
    ADD CONSTRAINT tasks_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id) ON DELETE CASCADE;


--
-- Name: tasks tasks_worker_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tasks
    ADD CONSTRAINT tasks_worker_id_fkey FOREIGN KEY (worker_id) REFERENCES public.workers(id);


--
-- Name: web_audit web_audit_chain_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.web_audit
    ADD CONSTRAINT web_audit_chain_id_fkey FOREIGN KEY (chain_id) REFERENCES public.chains(id) ON DELETE CASCADE;


--
-- Name: web_audit web_audit_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.web_audit
    ADD CONSTRAINT web_audit_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id) ON DELETE CASCADE;


--
-- Name: web_sessions web_sessions_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.web_sessions
    ADD CONSTRAINT web_sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.web_users(id) ON DELETE CASCADE;


--
-- Name: worker_builds worker_builds_worker_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.worker_builds
    ADD CONSTRAINT worker_builds_worker_id_fkey FOREIGN KEY (worker_id) REFERENCES public.workers(id) ON DELETE CASCADE;


--
-- Name: SCHEMA public; Type: ACL; Schema: -; Owner: -
--

GRANT USAGE ON SCHEMA public TO xqf_builder;
GRANT USAGE ON SCHEMA public TO xqf_coordinator;
GRANT USAGE ON SCHEMA public TO xqf_signer;
GRANT USAGE ON SCHEMA public TO xqf_web;
GRANT USAGE ON SCHEMA public TO xqf_auditor;


--
-- Name: FUNCTION xqf_apply_grants(); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_apply_grants() FROM PUBLIC;


--
-- Name: FUNCTION xqf_approve(p_run bigint, p_test_commit text, p_base_commit text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_approve(p_run bigint, p_test_commit text, p_base_commit text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_approve(p_run bigint, p_test_commit text, p_base_commit text) TO xqf_web;


--
-- Name: FUNCTION xqf_audit(p_actor text, p_run bigint, p_action text, p_detail text, p_chain bigint); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_audit(p_actor text, p_run bigint, p_action text, p_detail text, p_chain bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_audit(p_actor text, p_run bigint, p_action text, p_detail text, p_chain bigint) TO xqf_auditor;
GRANT ALL ON FUNCTION public.xqf_audit(p_actor text, p_run bigint, p_action text, p_detail text, p_chain bigint) TO xqf_web;


--
-- Name: TABLE replay_audits; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.replay_audits TO xqf_auditor;
GRANT SELECT,INSERT,UPDATE ON TABLE public.replay_audits TO xqf_coordinator;
GRANT SELECT ON TABLE public.replay_audits TO xqf_web;


--
-- Name: FUNCTION xqf_await_builds(p_run bigint, p_test_ref text, p_base_ref text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_await_builds(p_run bigint, p_test_ref text, p_base_ref text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_await_builds(p_run bigint, p_test_ref text, p_base_ref text) TO xqf_web;


--
-- Name: FUNCTION xqf_build_claim(p_builder text, p_lease_s integer); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_build_claim(p_builder text, p_lease_s integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_build_claim(p_builder text, p_lease_s integer) TO xqf_builder;


--
-- Name: FUNCTION xqf_build_done(p_request bigint, p_build bigint, p_error text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_build_done(p_request bigint, p_build bigint, p_error text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_build_done(p_request bigint, p_build bigint, p_error text) TO xqf_builder;


--
-- Name: FUNCTION xqf_build_pin(p_request bigint, p_commit text, p_subject text, p_error text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_build_pin(p_request bigint, p_commit text, p_subject text, p_error text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_build_pin(p_request bigint, p_commit text, p_subject text, p_error text) TO xqf_builder;


--
-- Name: FUNCTION xqf_build_signed(p_build bigint, p_sha256 text, p_signature text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_build_signed(p_build bigint, p_sha256 text, p_signature text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_build_signed(p_build bigint, p_sha256 text, p_signature text) TO xqf_signer;


--
-- Name: FUNCTION xqf_chain_add(p_name text, p_base_build bigint, p_base_net bigint, p_base_hce boolean); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_chain_add(p_name text, p_base_build bigint, p_base_net bigint, p_base_hce boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_chain_add(p_name text, p_base_build bigint, p_base_net bigint, p_base_hce boolean) TO xqf_web;


--
-- Name: FUNCTION xqf_chain_add_stage(p_chain bigint, p_idx integer, p_kind text, p_state text, p_run bigint, p_elo0 double precision, p_elo1 double precision, p_alpha double precision, p_beta double precision, p_max_pairs bigint, p_nodes bigint, p_base_ms bigint, p_inc_ms bigint, p_epochs integer, p_batch integer, p_lambda double precision, p_lr double precision); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_chain_add_stage(p_chain bigint, p_idx integer, p_kind text, p_state text, p_run bigint, p_elo0 double precision, p_elo1 double precision, p_alpha double precision, p_beta double precision, p_max_pairs bigint, p_nodes bigint, p_base_ms bigint, p_inc_ms bigint, p_epochs integer, p_batch integer, p_lambda double precision, p_lr double precision) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_chain_add_stage(p_chain bigint, p_idx integer, p_kind text, p_state text, p_run bigint, p_elo0 double precision, p_elo1 double precision, p_alpha double precision, p_beta double precision, p_max_pairs bigint, p_nodes bigint, p_base_ms bigint, p_inc_ms bigint, p_epochs integer, p_batch integer, p_lambda double precision, p_lr double precision) TO xqf_web;


--
-- Name: FUNCTION xqf_chain_run_ended(); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_chain_run_ended() FROM PUBLIC;


--
-- Name: FUNCTION xqf_chain_stop(p_chain bigint, p_actor text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_chain_stop(p_chain bigint, p_actor text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_chain_stop(p_chain bigint, p_actor text) TO xqf_web;


--
-- Name: FUNCTION xqf_chain_theta(); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_chain_theta() FROM PUBLIC;


--
-- Name: FUNCTION xqf_contributors_refresh(p_max_age_s integer); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_contributors_refresh(p_max_age_s integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_contributors_refresh(p_max_age_s integer) TO xqf_web;


--
-- Name: FUNCTION xqf_create_run(p_name text, p_params0 text, p_params1 text, p_build_id text, p_book_name text, p_book text[], p_nodes bigint, p_kind text, p_name0 text, p_name1 text, p_settings jsonb, p_test_build bigint, p_base_build bigint, p_tasks_on_claim boolean, p_test_net bigint, p_base_net bigint, p_ref_nps bigint, p_game_scores boolean, p_engine text, p_base_engine text, p_owner text, p_pending boolean, p_run_settings jsonb); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_create_run(p_name text, p_params0 text, p_params1 text, p_build_id text, p_book_name text, p_book text[], p_nodes bigint, p_kind text, p_name0 text, p_name1 text, p_settings jsonb, p_test_build bigint, p_base_build bigint, p_tasks_on_claim boolean, p_test_net bigint, p_base_net bigint, p_ref_nps bigint, p_game_scores boolean, p_engine text, p_base_engine text, p_owner text, p_pending boolean, p_run_settings jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_create_run(p_name text, p_params0 text, p_params1 text, p_build_id text, p_book_name text, p_book text[], p_nodes bigint, p_kind text, p_name0 text, p_name1 text, p_settings jsonb, p_test_build bigint, p_base_build bigint, p_tasks_on_claim boolean, p_test_net bigint, p_base_net bigint, p_ref_nps bigint, p_game_scores boolean, p_engine text, p_base_engine text, p_owner text, p_pending boolean, p_run_settings jsonb) TO xqf_web;


--
-- Name: FUNCTION xqf_create_spsa_params(p_run bigint, p_names text[], p_start double precision[], p_min double precision[], p_max double precision[], p_c_end double precision[], p_r_end double precision[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_create_spsa_params(p_run bigint, p_names text[], p_start double precision[], p_min double precision[], p_max double precision[], p_c_end double precision[], p_r_end double precision[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_create_spsa_params(p_run bigint, p_names text[], p_start double precision[], p_min double precision[], p_max double precision[], p_c_end double precision[], p_r_end double precision[]) TO xqf_web;


--
-- Name: FUNCTION xqf_engine_add(p_name text, p_repo text, p_build text, p_cmake text, p_binary text, p_bench text, p_nodes_re text, p_nps_re text, p_depth integer, p_protocol text, p_ranks boolean, p_he boolean, p_init text, p_hash text, p_threads text, p_net text, p_needs_net boolean, p_ref_nps bigint, p_actor text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_engine_add(p_name text, p_repo text, p_build text, p_cmake text, p_binary text, p_bench text, p_nodes_re text, p_nps_re text, p_depth integer, p_protocol text, p_ranks boolean, p_he boolean, p_init text, p_hash text, p_threads text, p_net text, p_needs_net boolean, p_ref_nps bigint, p_actor text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_engine_add(p_name text, p_repo text, p_build text, p_cmake text, p_binary text, p_bench text, p_nodes_re text, p_nps_re text, p_depth integer, p_protocol text, p_ranks boolean, p_he boolean, p_init text, p_hash text, p_threads text, p_net text, p_needs_net boolean, p_ref_nps bigint, p_actor text) TO xqf_web;


--
-- Name: FUNCTION xqf_engine_preset_remove(p_engine text, p_name text, p_actor text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_engine_preset_remove(p_engine text, p_name text, p_actor text) FROM PUBLIC;


--
-- Name: FUNCTION xqf_engine_preset_set(p_engine text, p_name text, p_keys text[], p_values text[], p_actor text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_engine_preset_set(p_engine text, p_name text, p_keys text[], p_values text[], p_actor text) FROM PUBLIC;


--
-- Name: FUNCTION xqf_modify_run(p_run bigint, p_actor text, p_priority integer, p_throughput integer, p_max_pairs bigint, p_extend bigint); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_modify_run(p_run bigint, p_actor text, p_priority integer, p_throughput integer, p_max_pairs bigint, p_extend bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_modify_run(p_run bigint, p_actor text, p_priority integer, p_throughput integer, p_max_pairs bigint, p_extend bigint) TO xqf_web;


--
-- Name: FUNCTION xqf_modify_spsa(p_run bigint, p_actor text, p_names text[], p_min double precision[], p_max double precision[], p_c_end double precision[], p_r_end double precision[], p_alpha double precision, p_gamma double precision, p_a_ratio double precision); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_modify_spsa(p_run bigint, p_actor text, p_names text[], p_min double precision[], p_max double precision[], p_c_end double precision[], p_r_end double precision[], p_alpha double precision, p_gamma double precision, p_a_ratio double precision) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_modify_spsa(p_run bigint, p_actor text, p_names text[], p_min double precision[], p_max double precision[], p_c_end double precision[], p_r_end double precision[], p_alpha double precision, p_gamma double precision, p_a_ratio double precision) TO xqf_web;


--
-- Name: FUNCTION xqf_net_approve(p_name text, p_actor text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_net_approve(p_name text, p_actor text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_net_approve(p_name text, p_actor text) TO xqf_web;


--
-- Name: FUNCTION xqf_net_upload(p_sha256 text, p_name text, p_description text, p_provenance text, p_bytes bytea, p_actor text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_net_upload(p_sha256 text, p_name text, p_description text, p_provenance text, p_bytes bytea, p_actor text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_net_upload(p_sha256 text, p_name text, p_description text, p_provenance text, p_bytes bytea, p_actor text) TO xqf_web;


--
-- Name: FUNCTION xqf_progression_add(p_name text, p_engine text, p_base_ref text, p_base_commit text, p_base_date text, p_base_subject text, p_created_by text, p_runs bigint[], p_refs text[], p_commits text[], p_dates text[], p_subjects text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_progression_add(p_name text, p_engine text, p_base_ref text, p_base_commit text, p_base_date text, p_base_subject text, p_created_by text, p_runs bigint[], p_refs text[], p_commits text[], p_dates text[], p_subjects text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_progression_add(p_name text, p_engine text, p_base_ref text, p_base_commit text, p_base_date text, p_base_subject text, p_created_by text, p_runs bigint[], p_refs text[], p_commits text[], p_dates text[], p_subjects text[]) TO xqf_web;


--
-- Name: FUNCTION xqf_progression_pin(p_run bigint, p_side text, p_commit text, p_date timestamp with time zone, p_subject text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_progression_pin(p_run bigint, p_side text, p_commit text, p_date timestamp with time zone, p_subject text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_progression_pin(p_run bigint, p_side text, p_commit text, p_date timestamp with time zone, p_subject text) TO xqf_builder;


--
-- Name: FUNCTION xqf_purge_done(p_run bigint, p_llr double precision, p_reopen boolean, p_actor text, p_detail text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_purge_done(p_run bigint, p_llr double precision, p_reopen boolean, p_actor text, p_detail text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_purge_done(p_run bigint, p_llr double precision, p_reopen boolean, p_actor text, p_detail text) TO xqf_web;


--
-- Name: FUNCTION xqf_purge_worker(p_run bigint, p_worker bigint); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_purge_worker(p_run bigint, p_worker bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_purge_worker(p_run bigint, p_worker bigint) TO xqf_web;


--
-- Name: FUNCTION xqf_run_book_add(p_run bigint, p_format text, p_sha256 text, p_openings integer, p_duplicates integer, p_plies integer, p_scored integer, p_score_min integer, p_score_max integer, p_score_mean double precision); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_run_book_add(p_run bigint, p_format text, p_sha256 text, p_openings integer, p_duplicates integer, p_plies integer, p_scored integer, p_score_min integer, p_score_max integer, p_score_mean double precision) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_run_book_add(p_run bigint, p_format text, p_sha256 text, p_openings integer, p_duplicates integer, p_plies integer, p_scored integer, p_score_min integer, p_score_max integer, p_score_mean double precision) TO xqf_web;


--
-- Name: FUNCTION xqf_run_changes(p_run bigint, p_test_ref text, p_base_ref text, p_test_commit text, p_base_commit text, p_test_tree text, p_total integer, p_hashes text[], p_subjects text[], p_authors text[], p_dates text[], p_diff text, p_diff_cut boolean, p_name text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_run_changes(p_run bigint, p_test_ref text, p_base_ref text, p_test_commit text, p_base_commit text, p_test_tree text, p_total integer, p_hashes text[], p_subjects text[], p_authors text[], p_dates text[], p_diff text, p_diff_cut boolean, p_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_run_changes(p_run bigint, p_test_ref text, p_base_ref text, p_test_commit text, p_base_commit text, p_test_tree text, p_total integer, p_hashes text[], p_subjects text[], p_authors text[], p_dates text[], p_diff text, p_diff_cut boolean, p_name text) TO xqf_builder;


--
-- Name: FUNCTION xqf_session_add(p_token_hash text, p_user bigint, p_csrf text, p_ttl_s bigint); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_session_add(p_token_hash text, p_user bigint, p_csrf text, p_ttl_s bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_session_add(p_token_hash text, p_user bigint, p_csrf text, p_ttl_s bigint) TO xqf_web;


--
-- Name: FUNCTION xqf_session_end(p_token_hash text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_session_end(p_token_hash text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_session_end(p_token_hash text) TO xqf_web;


--
-- Name: FUNCTION xqf_set_run_limits(p_run bigint, p_priority integer, p_max_pairs bigint, p_pairs_per_task integer); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_set_run_limits(p_run bigint, p_priority integer, p_max_pairs bigint, p_pairs_per_task integer) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_set_run_limits(p_run bigint, p_priority integer, p_max_pairs bigint, p_pairs_per_task integer) TO xqf_web;


--
-- Name: FUNCTION xqf_stop_run(p_run bigint, p_actor text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_stop_run(p_run bigint, p_actor text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_stop_run(p_run bigint, p_actor text) TO xqf_web;


--
-- Name: FUNCTION xqf_user_add(p_name text, p_role text, p_pwhash text, p_actor text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.xqf_user_add(p_name text, p_role text, p_pwhash text, p_actor text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.xqf_user_add(p_name text, p_role text, p_pwhash text, p_actor text) TO xqf_web;


--
-- Name: TABLE audit_secret; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.audit_secret TO xqf_coordinator;


--
-- Name: TABLE build_params; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,INSERT,DELETE ON TABLE public.build_params TO xqf_builder;
GRANT SELECT ON TABLE public.build_params TO xqf_web;


--
-- Name: TABLE build_requests; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.build_requests TO xqf_builder;
GRANT SELECT ON TABLE public.build_requests TO xqf_coordinator;
GRANT SELECT ON TABLE public.build_requests TO xqf_signer;
GRANT SELECT ON TABLE public.build_requests TO xqf_web;


--
-- Name: TABLE chain_stages; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.chain_stages TO xqf_web;


--
-- Name: TABLE chains; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.chains TO xqf_web;


--
-- Name: TABLE contributors; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.contributors TO xqf_web;


--
-- Name: TABLE contributors_made; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.contributors_made TO xqf_web;


--
-- Name: TABLE engine_builds; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.engine_builds TO xqf_auditor;
GRANT SELECT ON TABLE public.engine_builds TO xqf_builder;
GRANT SELECT ON TABLE public.engine_builds TO xqf_coordinator;
GRANT SELECT ON TABLE public.engine_builds TO xqf_signer;
GRANT SELECT ON TABLE public.engine_builds TO xqf_web;


--
-- Name: COLUMN engine_builds.sha256; Type: ACL; Schema: public; Owner: -
--

GRANT INSERT(sha256) ON TABLE public.engine_builds TO xqf_builder;


--
-- Name: COLUMN engine_builds.build_id; Type: ACL; Schema: public; Owner: -
--

GRANT INSERT(build_id),UPDATE(build_id) ON TABLE public.engine_builds TO xqf_builder;


--
-- Name: COLUMN engine_builds.bench_nodes; Type: ACL; Schema: public; Owner: -
--

GRANT INSERT(bench_nodes),UPDATE(bench_nodes) ON TABLE public.engine_builds TO xqf_builder;


--
-- Name: COLUMN engine_builds.path; Type: ACL; Schema: public; Owner: -
--

GRANT INSERT(path),UPDATE(path) ON TABLE public.engine_builds TO xqf_builder;


--
-- Name: COLUMN engine_builds.blob; Type: ACL; Schema: public; Owner: -
--

GRANT UPDATE(blob) ON TABLE public.engine_builds TO xqf_builder;


--
-- Name: COLUMN engine_builds.run_id; Type: ACL; Schema: public; Owner: -
--

GRANT INSERT(run_id),UPDATE(run_id) ON TABLE public.engine_builds TO xqf_builder;


--
-- Name: COLUMN engine_builds.params_hash; Type: ACL; Schema: public; Owner: -
--

GRANT INSERT(params_hash),UPDATE(params_hash) ON TABLE public.engine_builds TO xqf_builder;


--
-- Name: COLUMN engine_builds.git_commit; Type: ACL; Schema: public; Owner: -
--

GRANT UPDATE(git_commit) ON TABLE public.engine_builds TO xqf_builder;


--
-- Name: COLUMN engine_builds.git_tree; Type: ACL; Schema: public; Owner: -
--

GRANT UPDATE(git_tree) ON TABLE public.engine_builds TO xqf_builder;


--
-- Name: COLUMN engine_builds.git_subject; Type: ACL; Schema: public; Owner: -
--

GRANT UPDATE(git_subject) ON TABLE public.engine_builds TO xqf_builder;


--
-- Name: COLUMN engine_builds.params_listed; Type: ACL; Schema: public; Owner: -
--

GRANT UPDATE(params_listed) ON TABLE public.engine_builds TO xqf_builder;


--
-- Name: COLUMN engine_builds.net_id; Type: ACL; Schema: public; Owner: -
--

GRANT INSERT(net_id),UPDATE(net_id) ON TABLE public.engine_builds TO xqf_builder;


--
-- Name: SEQUENCE engine_builds_id_seq; Type: ACL; Schema: public; Owner: -
--

GRANT USAGE ON SEQUENCE public.engine_builds_id_seq TO xqf_builder;


--
-- Name: TABLE engine_history; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.engine_history TO xqf_web;


--
-- Name: TABLE engine_presets; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.engine_presets TO xqf_web;


--
-- Name: TABLE engines; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.engines TO xqf_auditor;
GRANT SELECT ON TABLE public.engines TO xqf_builder;
GRANT SELECT ON TABLE public.engines TO xqf_coordinator;
GRANT SELECT ON TABLE public.engines TO xqf_web;


--
-- Name: TABLE game_fens; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.game_fens TO xqf_auditor;
GRANT SELECT,INSERT ON TABLE public.game_fens TO xqf_coordinator;
GRANT SELECT ON TABLE public.game_fens TO xqf_web;


--
-- Name: SEQUENCE game_fens_id_seq; Type: ACL; Schema: public; Owner: -
--

GRANT USAGE ON SEQUENCE public.game_fens_id_seq TO xqf_coordinator;


--
-- Name: TABLE games; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.games TO xqf_auditor;
GRANT SELECT,INSERT ON TABLE public.games TO xqf_coordinator;
GRANT SELECT ON TABLE public.games TO xqf_web;


--
-- Name: SEQUENCE lease_tokens; Type: ACL; Schema: public; Owner: -
--

GRANT USAGE ON SEQUENCE public.lease_tokens TO xqf_coordinator;


--
-- Name: TABLE nets; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.nets TO xqf_auditor;
GRANT SELECT ON TABLE public.nets TO xqf_builder;
GRANT SELECT ON TABLE public.nets TO xqf_coordinator;
GRANT SELECT ON TABLE public.nets TO xqf_web;


--
-- Name: TABLE progression_points; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.progression_points TO xqf_web;


--
-- Name: TABLE progressions; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.progressions TO xqf_web;


--
-- Name: SEQUENCE replay_audits_id_seq; Type: ACL; Schema: public; Owner: -
--

GRANT USAGE ON SEQUENCE public.replay_audits_id_seq TO xqf_coordinator;


--
-- Name: TABLE results; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.results TO xqf_auditor;
GRANT SELECT,INSERT,UPDATE ON TABLE public.results TO xqf_coordinator;
GRANT SELECT ON TABLE public.results TO xqf_web;


--
-- Name: TABLE run_books; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.run_books TO xqf_coordinator;
GRANT SELECT ON TABLE public.run_books TO xqf_web;


--
-- Name: TABLE run_changes; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.run_changes TO xqf_web;


--
-- Name: TABLE run_commits; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.run_commits TO xqf_web;


--
-- Name: TABLE run_param_history; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,INSERT ON TABLE public.run_param_history TO xqf_coordinator;
GRANT SELECT ON TABLE public.run_param_history TO xqf_web;


--
-- Name: TABLE run_params; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.run_params TO xqf_builder;
GRANT SELECT,UPDATE ON TABLE public.run_params TO xqf_coordinator;
GRANT SELECT ON TABLE public.run_params TO xqf_web;


--
-- Name: TABLE run_progress; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,INSERT ON TABLE public.run_progress TO xqf_coordinator;
GRANT SELECT ON TABLE public.run_progress TO xqf_web;


--
-- Name: TABLE runs; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.runs TO xqf_auditor;
GRANT SELECT ON TABLE public.runs TO xqf_builder;
GRANT SELECT,UPDATE ON TABLE public.runs TO xqf_coordinator;
GRANT SELECT ON TABLE public.runs TO xqf_signer;
GRANT SELECT ON TABLE public.runs TO xqf_web;


--
-- Name: TABLE schema_migrations; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.schema_migrations TO xqf_auditor;
GRANT SELECT ON TABLE public.schema_migrations TO xqf_builder;
GRANT SELECT ON TABLE public.schema_migrations TO xqf_coordinator;
GRANT SELECT ON TABLE public.schema_migrations TO xqf_signer;
GRANT SELECT ON TABLE public.schema_migrations TO xqf_web;


--
-- Name: TABLE search_audit_passes; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,INSERT,UPDATE ON TABLE public.search_audit_passes TO xqf_auditor;
GRANT SELECT ON TABLE public.search_audit_passes TO xqf_coordinator;
GRANT SELECT ON TABLE public.search_audit_passes TO xqf_web;


--
-- Name: SEQUENCE search_audit_passes_id_seq; Type: ACL; Schema: public; Owner: -
--

GRANT USAGE ON SEQUENCE public.search_audit_passes_id_seq TO xqf_auditor;


--
-- Name: TABLE search_audits; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,INSERT ON TABLE public.search_audits TO xqf_auditor;
GRANT SELECT ON TABLE public.search_audits TO xqf_coordinator;
GRANT SELECT ON TABLE public.search_audits TO xqf_web;


--
-- Name: SEQUENCE search_audits_id_seq; Type: ACL; Schema: public; Owner: -
--

GRANT USAGE ON SEQUENCE public.search_audits_id_seq TO xqf_auditor;


--
-- Name: TABLE tasks; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.tasks TO xqf_auditor;
GRANT SELECT,INSERT,UPDATE ON TABLE public.tasks TO xqf_coordinator;
GRANT SELECT ON TABLE public.tasks TO xqf_web;


--
-- Name: SEQUENCE tasks_id_seq; Type: ACL; Schema: public; Owner: -
--

GRANT USAGE ON SEQUENCE public.tasks_id_seq TO xqf_coordinator;


--
-- Name: TABLE web_audit; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.web_audit TO xqf_web;


--
-- Name: TABLE web_sessions; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.web_sessions TO xqf_web;


--
-- Name: TABLE web_users; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.web_users TO xqf_web;


--
-- Name: TABLE worker_builds; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,DELETE ON TABLE public.worker_builds TO xqf_builder;
GRANT SELECT,INSERT,UPDATE ON TABLE public.worker_builds TO xqf_coordinator;
GRANT SELECT ON TABLE public.worker_builds TO xqf_web;


--
-- Name: TABLE workers; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.workers TO xqf_auditor;
GRANT SELECT,INSERT,UPDATE ON TABLE public.workers TO xqf_coordinator;
GRANT SELECT ON TABLE public.workers TO xqf_web;


--
-- Name: SEQUENCE workers_id_seq; Type: ACL; Schema: public; Owner: -
--

GRANT USAGE ON SEQUENCE public.workers_id_seq TO xqf_coordinator;


--
-- PostgreSQL database dump complete
--


