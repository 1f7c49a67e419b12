-- The commit a builder reads a request's ref as now (p_commit, its
-- subject p_subject; NULL with p_error: the ref does not resolve).
--
-- The first time (the request is not pinned: its test was just made), the
-- commit is pinned: the approval page shows it, an admin approves exactly
-- it (xqf_approve), and it is what gets built.  Later (the builder about
-- to build the request it claimed), the ref must still name the pinned
-- commit: a ref that moved (a force-push, a mirror's fetch) or cannot be
-- read is refused.  A ref that does not resolve, or that moved, fails the
-- request with the reason (both commits named), the run's other open
-- requests, and the run ('failed'; a moved ref's verdict names the side
-- and both commits, 12 digits each).  A request of a run that ended meanwhile fails.
-- Returns the run's state after it, or NULL when the request is not open.
-- grant: xqf_builder
CREATE OR REPLACE FUNCTION xqf_build_pin(p_request bigint, p_commit text, p_subject text, p_error text)
RETURNS text
LANGUAGE plpgsql SECURITY DEFINER AS $$
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
