-- An admin's approval: a pending run with requests still to build goes to
-- 'building' (the builder may take them now), any other pending run to
-- 'active'.  Returns the run's new state, or NULL when it was not pending.
CREATE OR REPLACE FUNCTION xqf_approve(p_run bigint) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER AS $$
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
