-- Extends an audit's lease, first or third replay ('ok'), or 'stale'.
CREATE OR REPLACE FUNCTION xqf_audit_heartbeat(p_audit bigint, p_token bigint, p_worker bigint, p_lease_ms bigint)
RETURNS text LANGUAGE sql AS $$
    WITH a AS (
        UPDATE replay_audits SET lease_deadline = now() + p_lease_ms * interval '1 millisecond'
         WHERE id = p_audit AND xqf_audit_held(replay_audits, p_token, p_worker)
        RETURNING id)
    SELECT CASE WHEN EXISTS (SELECT 1 FROM a) THEN 'ok' ELSE 'stale' END
$$;
