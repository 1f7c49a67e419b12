-- The end of a purge (xqf_purge_worker took the worker's results out; the
-- LLR was computed again from what is left): the LLR stored, the run
-- active again when p_reopen, the purge in the run's history.
-- grant: xqf_web
CREATE OR REPLACE FUNCTION xqf_purge_done(p_run bigint, p_llr double precision, p_reopen boolean, p_actor text, p_detail text)
RETURNS void LANGUAGE sql SECURITY DEFINER AS $$
    UPDATE runs SET llr = p_llr, state = CASE WHEN p_reopen THEN 'active' ELSE state END,
                    verdict = CASE WHEN p_reopen THEN NULL ELSE verdict END,
                    finished_at = CASE WHEN p_reopen THEN NULL ELSE finished_at END
     WHERE id = p_run;
    INSERT INTO web_audit (actor, run_id, action, detail) VALUES (p_actor, p_run, 'purge', p_detail);
$$;
