-- Leases the oldest open audit to worker p_worker: a first replay (pending,
-- or its lease run out) of a pair no worker of its key played first, or a
-- third replay of a mismatch that no worker of its key played first nor
-- replayed (and whose pair's games are still stored: a purge takes them).
CREATE OR REPLACE FUNCTION xqf_claim_audit(p_worker bigint, p_build text, p_lease_ms bigint)
RETURNS TABLE (o_audit bigint, o_token bigint, o_run bigint, o_pair bigint, o_params0 text, o_params1 text)
LANGUAGE plpgsql AS $$
DECLARE
    a_id bigint;
    a_third boolean;
    v_key text;
BEGIN
    SELECT coalesce(auth_name, name) INTO v_key FROM workers WHERE id = p_worker;
    SELECT a.id, a.arbiter IS NOT NULL INTO a_id, a_third
      FROM replay_audits a JOIN runs r ON r.id = a.run_id
                           JOIN workers f ON f.id = a.first_worker
                           LEFT JOIN workers s ON s.id = a.second_worker
     WHERE ((a.state = 'pending' OR (a.state = 'leased' AND a.lease_deadline < now()))
            OR ((a.arbiter = 'pending' OR (a.arbiter = 'leased' AND a.lease_deadline < now()))
                AND s.id IS NOT NULL AND a.second_worker <> p_worker
                AND coalesce(s.auth_name, s.name) IS DISTINCT FROM v_key
                AND EXISTS (SELECT 1 FROM games g WHERE g.run_id = a.run_id AND g.game = 2 * a.pair)))
       AND a.first_worker <> p_worker AND coalesce(f.auth_name, f.name) IS DISTINCT FROM v_key
       AND r.state IN ('active', 'finished')
       AND (r.build_id = '' OR r.build_id = p_build)
     ORDER BY a.id LIMIT 1 FOR UPDATE OF a SKIP LOCKED;
    IF a_id IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
    UPDATE replay_audits a
       SET state = CASE WHEN a_third THEN a.state ELSE 'leased' END,
           second_worker = CASE WHEN a_third THEN a.second_worker ELSE p_worker END,
           arbiter = CASE WHEN a_third THEN 'leased' END,
           third_worker = CASE WHEN a_third THEN p_worker END,
           lease_token = nextval('lease_tokens'),
           lease_deadline = now() + p_lease_ms * interval '1 millisecond'
      FROM tasks t WHERE a.id = a_id AND t.id = a.task_id
    RETURNING a.id, a.lease_token, a.run_id, a.pair, t.params0, t.params1;
END $$;
