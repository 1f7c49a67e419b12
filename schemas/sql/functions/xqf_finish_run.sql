-- Ends a run (see 002_functions.sql); a 'max pairs' end of a run with
-- quarantined tasks is a 'stopped' one with the quarantine as verdict.
CREATE OR REPLACE FUNCTION xqf_finish_run(p_run bigint, p_state text, p_verdict text, p_llr double precision)
RETURNS boolean LANGUAGE plpgsql AS $$
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
