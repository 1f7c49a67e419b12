-- A run stopped by someone (p_verdict "stopped by NAME"): one waiting for
-- approval or builds at once, an active one through xqf_finish_run (its
-- open tasks cancelled).  Returns false when it had ended already.
CREATE OR REPLACE FUNCTION xqf_stop_run(p_run bigint, p_verdict text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    UPDATE runs SET state = 'stopped', verdict = p_verdict, finished_at = now()
     WHERE id = p_run AND state IN ('pending', 'building');
    IF FOUND THEN
        RETURN true;
    END IF;
    RETURN xqf_finish_run(p_run, 'stopped', p_verdict, NULL);
END $$;
