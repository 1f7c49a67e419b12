-- Extends a lease; counts only from the worker holding it.  'ok' or 'stale'.
CREATE OR REPLACE FUNCTION xqf_heartbeat(p_worker bigint, p_task bigint, p_token bigint, p_lease_ms bigint)
RETURNS text LANGUAGE sql AS $$
    WITH t AS (
        UPDATE tasks SET lease_deadline = now() + p_lease_ms * interval '1 millisecond'
         WHERE id = p_task AND lease_token = p_token AND state = 'leased' AND worker_id = p_worker
        RETURNING worker_id)
    SELECT CASE WHEN EXISTS (SELECT 1 FROM t) THEN 'ok' ELSE 'stale' END
$$;
