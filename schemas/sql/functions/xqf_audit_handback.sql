-- Gives an audit back (pending again, first or third replay, for any
-- other worker): 'ok' or 'stale'.
CREATE OR REPLACE FUNCTION xqf_audit_handback(p_audit bigint, p_token bigint, p_worker bigint)
RETURNS text LANGUAGE sql AS $$
    WITH a AS (
        UPDATE replay_audits
           SET state = CASE WHEN arbiter IS NULL THEN 'pending' ELSE state END,
               second_worker = CASE WHEN arbiter IS NULL THEN NULL ELSE second_worker END,
               arbiter = CASE WHEN arbiter IS NULL THEN NULL ELSE 'pending' END,
               third_worker = NULL, lease_token = NULL, lease_deadline = NULL
         WHERE id = p_audit AND xqf_audit_held(replay_audits, p_token, p_worker)
        RETURNING id)
    SELECT CASE WHEN EXISTS (SELECT 1 FROM a) THEN 'ok' ELSE 'stale' END
$$;
