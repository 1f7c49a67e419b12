-- An admin's approval of the commits the approval page showed
-- (p_test_commit, p_base_commit; NULL for a side without a ref to build):
-- a pending run with requests still to build goes to 'building' (the
-- builder may build them now) when each request is pinned to exactly the
-- commit given for its side (050: the approval binds commits, not ref
-- names), any other pending run to 'active'.  Returns the run's new state,
-- or NULL when it was not pending, a request is not pinned yet, or a
-- commit is not the one pinned.
-- grant: xqf_web
CREATE OR REPLACE FUNCTION xqf_approve(p_run bigint, p_test_commit text, p_base_commit text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER AS $$
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
