-- 017: SPRTs of git refs created on the web (docs/web.md).
--
-- xqf-web never compiles: a test of two git refs is created waiting, in
-- state 'building', with one build request per ref; a builder (xqf-tune
-- build --serve, on a host with the repository and a compiler) claims the
-- requests, builds each ref as xqf-tune build --ref does, and records the
-- outcome here.  When every request of a run is done, the run takes its
-- builds and the state it was created in (built_state: 'active', or
-- 'pending' for a tester's run, which still waits for an admin's
-- approval), in the same transaction; a request that fails (an unknown
-- ref, a failed compile, a bench that is not the commit's Bench: line)
-- ends the run in state 'failed' with the reason.  A 'building' run is not
-- 'active': the coordinator gives none of its tasks.
ALTER TABLE runs DROP CONSTRAINT runs_state_check;
ALTER TABLE runs ADD CONSTRAINT runs_state_check
    CHECK (state IN ('active', 'paused', 'finished', 'stopped', 'pending', 'building', 'failed'));
ALTER TABLE runs ADD COLUMN built_state text CHECK (built_state IN ('active', 'pending'));

CREATE TABLE build_requests (
    id          bigserial PRIMARY KEY,
    run_id      bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    side        text NOT NULL CHECK (side IN ('test', 'base')),
    ref         text NOT NULL CHECK (length(ref) BETWEEN 1 AND 255),
    state       text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'building', 'done', 'failed')),
    build_id    bigint REFERENCES engine_builds(id),
    error       text NOT NULL DEFAULT '',     -- why it failed, with the build log's tail
    builder     text NOT NULL DEFAULT '',     -- host and process of the builder that took it
    created_at  timestamptz NOT NULL DEFAULT now(),
    started_at  timestamptz,
    finished_at timestamptz,
    UNIQUE (run_id, side)
);
CREATE INDEX build_requests_open ON build_requests (id) WHERE state IN ('queued', 'building');

-- A request's progress is its run's: the run's page follows it live.
CREATE FUNCTION xqf_build_request_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('xqf_run_progress', NEW.run_id::text);
    RETURN NULL;
END $$;
CREATE TRIGGER build_requests_notify AFTER UPDATE OF state ON build_requests
    FOR EACH ROW EXECUTE FUNCTION xqf_build_request_notify();

-- The run just created (active or pending) waits for the builds of its
-- refs (NULL: that side has none).  Returns false when the run is not
-- new (not active or pending) or no ref is given.
CREATE FUNCTION xqf_await_builds(p_run bigint, p_test_ref text, p_base_ref text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF p_test_ref IS NULL AND p_base_ref IS NULL THEN
        RETURN false;
    END IF;
    UPDATE runs SET built_state = state, state = 'building'
     WHERE id = p_run AND state IN ('active', 'pending') AND next_pair = 0;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    INSERT INTO build_requests (run_id, side, ref)
    SELECT p_run, side, ref FROM (VALUES ('test', p_test_ref), ('base', p_base_ref)) v (side, ref)
     WHERE ref IS NOT NULL;
    RETURN true;
END $$;

-- The oldest request a builder may take: queued, or taken by a builder
-- more than p_lease_s seconds ago (it died), of a run still building.
-- Requests of runs that ended meanwhile (stopped from the web) fail
-- first.  Returns the request (no row: none to build).
CREATE FUNCTION xqf_build_claim(p_builder text, p_lease_s integer)
RETURNS TABLE (id bigint, run_id bigint, side text, ref text)
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE build_requests q SET state = 'failed', finished_at = now(),
                                error = format('not built: the run was %s first', r.state)
      FROM runs r
     WHERE r.id = q.run_id AND q.state = 'queued' AND r.state <> 'building';
    RETURN QUERY
    UPDATE build_requests q SET state = 'building', started_at = now(), builder = p_builder
     WHERE q.id = (SELECT c.id FROM build_requests c JOIN runs r ON r.id = c.run_id
                    WHERE r.state = 'building'
                      AND (c.state = 'queued'
                           OR (c.state = 'building' AND c.started_at < now() - p_lease_s * interval '1 second'))
                    ORDER BY c.id LIMIT 1 FOR UPDATE OF c SKIP LOCKED)
    RETURNING q.id, q.run_id, q.side, q.ref;
END $$;

-- A request built (p_build) or failed (NULL, p_error the reason).  When
-- the last request of its run is done, the run takes the builds and its
-- built_state; a failure ends the run ('failed', its verdict naming the
-- side and ref; the full reason stays on the request) and fails its other
-- open requests.  Returns the run's state after it, or NULL when the
-- request was not being built.
CREATE FUNCTION xqf_build_done(p_request bigint, p_build bigint, p_error text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    q build_requests%ROWTYPE;
    r runs%ROWTYPE;
    v_test bigint;
    v_base bigint;
BEGIN
    -- the run first, then its requests: the order every writer takes them
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
    UPDATE runs SET test_build = v_test, base_build = v_base, state = r.built_state WHERE runs.id = r.id;
    RETURN r.built_state;
END $$;
