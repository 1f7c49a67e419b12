-- A run stopped by p_actor (the plain verb stop, run_verbs.def: verdict
-- "stopped by NAME"): one waiting for approval or builds at once, an
-- active one through xqf_finish_run (its open tasks cancelled).  Returns
-- NULL when stopped, else why not, said of the run ("has ended (finished)").
-- grant: xqf_web
CREATE OR REPLACE FUNCTION xqf_stop_run(p_run bigint, p_actor text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    UPDATE runs SET state = 'stopped', verdict = 'stopped by ' || p_actor, finished_at = now()
     WHERE id = p_run AND state IN ('pending', 'building');
    IF FOUND OR xqf_finish_run(p_run, 'stopped', 'stopped by ' || p_actor, NULL) THEN
        RETURN NULL;
    END IF;
    RETURN format('has ended (%s)', coalesce((SELECT state FROM runs WHERE id = p_run), 'gone'));
END $$;
