-- One line of the audit (run 0: none).
-- grant: xqf_auditor, xqf_web
CREATE OR REPLACE FUNCTION xqf_audit(p_actor text, p_run bigint, p_action text, p_detail text) RETURNS void
LANGUAGE sql SECURITY DEFINER AS $$
    INSERT INTO web_audit (actor, run_id, action, detail) VALUES (p_actor, nullif(p_run, 0), p_action, p_detail)
$$;
