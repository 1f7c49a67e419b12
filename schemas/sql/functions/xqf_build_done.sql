-- A request built (p_build) or failed (NULL, p_error the reason), as in
-- 017, except that a run whose builds are all done takes them and starts
-- only when they are signed (xqf_builds_ready); an SPSA run's one request
-- (another engine's ref, 044) gives the build of both sides.  Its line of
-- the events log (the builder's "build" or "build failed", of the run) is
-- written with it.
-- grant: xqf_builder
CREATE OR REPLACE FUNCTION xqf_build_done(p_request bigint, p_build bigint, p_error text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER AS $$
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
