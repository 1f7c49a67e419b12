-- 019: a tester's branch is built only after an admin approved it, and
-- signed apart from the builder.
--
-- Building a branch runs its code (CMake runs what the tree says), so the
-- builder must not take a tester's request before an admin has read the
-- branch and approved the test: a tester's test of git refs now waits in
-- state 'pending' with its requests queued; approving it (xqf_approve)
-- moves it to 'building', and only then may a builder claim its requests.
-- An admin's test goes to 'building' at once, as before.
--
-- The builder holds no key.  A build it registers is unsigned; the run
-- waits in 'building' until a signer (xqf-tune build --sign-serve, a
-- process of its own that never runs a built binary) has checked the
-- stored bytes against their SHA-256 and signed them (xqf_build_signed).
-- A build of a tree that was signed before is reused as it is, and its
-- run starts when its requests are done.

-- The run just created waits for the builds of its refs: an admin's
-- (active) in 'building', a tester's (pending) in 'pending' until approved.
CREATE OR REPLACE FUNCTION xqf_await_builds(p_run bigint, p_test_ref text, p_base_ref text) RETURNS boolean
LANGUAGE plpgsql AS $$
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

-- An admin's approval: a pending run with requests still to build goes to
-- 'building' (the builder may take them now), any other pending run to
-- 'active'.  Returns the run's new state, or NULL when it was not pending.
CREATE FUNCTION xqf_approve(p_run bigint) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v_state text;
BEGIN
    UPDATE runs SET state = CASE WHEN EXISTS (SELECT 1 FROM build_requests q
                                               WHERE q.run_id = runs.id AND q.state IN ('queued', 'building'))
                                 THEN 'building' ELSE 'active' END
     WHERE id = p_run AND state = 'pending'
    RETURNING state INTO v_state;
    RETURN v_state;
END $$;

-- The oldest request a builder may take: of an approved run (state
-- 'building'; a pending run's requests wait), queued or taken by a builder
-- that died.  Requests of runs that ended meanwhile fail first.
CREATE OR REPLACE FUNCTION xqf_build_claim(p_builder text, p_lease_s integer)
RETURNS TABLE (id bigint, run_id bigint, side text, ref text)
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE build_requests q SET state = 'failed', finished_at = now(),
                                error = format('not built: the run was %s first', r.state)
      FROM runs r
     WHERE r.id = q.run_id AND q.state = 'queued' AND r.state NOT IN ('building', 'pending');
    RETURN QUERY
    UPDATE build_requests q SET state = 'building', started_at = now(), builder = p_builder
     WHERE q.id = (SELECT c.id FROM build_requests c JOIN runs r ON r.id = c.run_id
                    WHERE r.state = 'building'
                      AND (c.state = 'queued'
                           OR (c.state = 'building' AND c.started_at < now() - p_lease_s * interval '1 second'))
                    ORDER BY c.id LIMIT 1 FOR UPDATE OF c SKIP LOCKED)
    RETURNING q.id, q.run_id, q.side, q.ref;
END $$;

-- A run whose requests are all built starts once its builds are signed:
-- its state after the check ('building' while a build waits for the signer).
CREATE FUNCTION xqf_builds_ready(p_run bigint) RETURNS text
LANGUAGE plpgsql AS $$
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

-- A request built (p_build) or failed (NULL, p_error the reason), as in
-- 017, except that a run whose builds are all done takes them and starts
-- only when they are signed (xqf_builds_ready).
CREATE OR REPLACE FUNCTION xqf_build_done(p_request bigint, p_build bigint, p_error text) RETURNS text
LANGUAGE plpgsql AS $$
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
    IF v_test IS NOT DISTINCT FROM v_base THEN
        UPDATE runs SET state = 'failed', finished_at = now(), test_build = v_test, base_build = v_base,
                        verdict = 'test and base are the same build'
         WHERE runs.id = r.id;
        RETURN 'failed';
    END IF;
    UPDATE runs SET test_build = v_test, base_build = v_base WHERE runs.id = r.id;
    RETURN xqf_builds_ready(r.id);
END $$;

-- The next build a signer may sign: built for a run that waits in
-- 'building' with every request done, and not signed yet.  Returns its id,
-- SHA-256 and name (no row: nothing to sign).
CREATE FUNCTION xqf_sign_next() RETURNS TABLE (id bigint, sha256 text, build_id text)
LANGUAGE sql AS $$
    SELECT b.id, b.sha256, b.build_id FROM engine_builds b JOIN runs r ON b.id IN (r.test_build, r.base_build)
     WHERE r.state = 'building' AND b.signature IS NULL AND b.blob IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM build_requests q WHERE q.run_id = r.id AND q.state <> 'done')
     ORDER BY b.id LIMIT 1
$$;

-- A build signed by the signer: the signature kept, and every run that
-- waited for it started when its builds are all signed.  Returns how many
-- runs started, or NULL when the build was signed already or its bytes
-- are not the SHA-256 the signer checked.
CREATE FUNCTION xqf_build_signed(p_build bigint, p_sha256 text, p_signature text) RETURNS integer
LANGUAGE plpgsql AS $$
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
