-- A chain stopped by p_actor (verdict "stopped by NAME"): the run of its
-- running stage stopped as xqf_stop_run stops any run (its tasks in flight
-- cancelled), that stage stopped (a build, training or net that waits for
-- xqf-tune chain advance too), the stages not started cancelled, and the
-- chain stopped with the stage and the verdict as its note, so that
-- nothing moves it on after: xqf_chain_run_ended (at the commit, for the
-- run stopped here too) and xqf_chain_done (chain advance) move only an
-- active chain.  One row: the run stopped (0: the stage had none), the
-- stage, the stages cancelled; none when it is no active chain (none, or
-- ended).
--
-- Lock order: the running stage's run before the chain, the order of a
-- run's end (the coordinator locks the run; the trigger, deferred to its
-- commit, the chain), so that a stop and a stage's end wait for each
-- other rather than deadlock; a stage that moved on while this waited is
-- read again, its new run locked in turn.
-- grant: xqf_web
CREATE OR REPLACE FUNCTION xqf_chain_stop(p_chain bigint, p_actor text)
RETURNS TABLE (o_run bigint, o_stage integer, o_cancelled integer)
LANGUAGE plpgsql SECURITY DEFINER AS $$
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
