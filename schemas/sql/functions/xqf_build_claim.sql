-- The oldest request a builder may take: of an approved run (state
-- 'building'; a pending run's requests wait), pinned to its commit
-- (xqf_build_pin), queued or taken by a builder that died.  Requests of
-- runs that ended meanwhile fail first.  The commit is what the builder
-- builds, once it has checked that the ref still names it.
-- grant: xqf_builder
CREATE OR REPLACE FUNCTION xqf_build_claim(p_builder text, p_lease_s integer)
RETURNS TABLE (id bigint, run_id bigint, side text, ref text, git_commit text, git_subject text)
LANGUAGE plpgsql SECURITY DEFINER AS $$
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
