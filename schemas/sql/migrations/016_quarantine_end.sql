-- 016: a run whose remaining tasks are all quarantined ends (docs/programs/xqf-coordinator.md).
--
-- A run that has given out all its pairs and has no task queued or
-- leased any more, only quarantined ones (010_bounds.sql), would stay
-- 'active' forever: no report can come to finish it, and no command gives
-- a quarantined task back.  It is stopped, with the quarantine as its
-- verdict ("2 tasks quarantined: xqf-tune show 7"):
--   - by the hand-back that quarantines its last open task
--     (xqf_handback below);
--   - wherever a run is finished for 'max pairs' (a report that completes
--     the last other task, a lowered maximum): it did not play all its
--     pairs, so it is not 'finished' (xqf_finish_run below).

-- Ends a run (see 002_functions.sql); a 'max pairs' end of a run with
-- quarantined tasks is a 'stopped' one with the quarantine as verdict.
CREATE OR REPLACE FUNCTION xqf_finish_run(p_run bigint, p_state text, p_verdict text, p_llr double precision)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    v_quarantined bigint;
BEGIN
    -- Locks the run, then its tasks: the order reports take them.
    PERFORM 1 FROM runs WHERE id = p_run AND state = 'active' FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
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

-- Gives a leased task back (see 010_bounds.sql); when that quarantines
-- the last open task of a run that has given out all its pairs, the run
-- ends (stopped, by xqf_finish_run above).
DROP FUNCTION xqf_handback(bigint, bigint, bigint, text, boolean, integer);
CREATE FUNCTION xqf_handback(p_worker bigint, p_task bigint, p_token bigint, p_reason text,
                             p_refused boolean, p_quarantine_after integer)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    v_state text;
    v_run bigint;
BEGIN
    UPDATE tasks SET state = CASE WHEN p_refused AND p_quarantine_after > 0
                                       AND refusals + 1 >= p_quarantine_after
                                  THEN 'quarantined' ELSE 'queued' END,
                     worker_id = NULL, lease_token = NULL, lease_deadline = NULL, last_error = p_reason,
                     refusals = refusals + CASE WHEN p_refused THEN 1 ELSE 0 END,
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
