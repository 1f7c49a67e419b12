-- One line of the audit (run 0: none; p_chain, a chain's verb: the chain, else none).
-- grant: xqf_auditor, xqf_web
CREATE OR REPLACE FUNCTION xqf_audit(p_actor text, p_run bigint, p_action text, p_detail text,
                                     p_chain bigint DEFAULT NULL) RETURNS void
LANGUAGE sql SECURITY DEFINER AS $$
    INSERT INTO web_audit (actor, run_id, action, detail, chain_id)
    VALUES (p_actor, nullif(p_run, 0), p_action, p_detail, nullif(p_chain, 0))
$$;
