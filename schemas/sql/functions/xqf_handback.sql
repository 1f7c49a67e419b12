-- Gives a leased task back (see 016_quarantine_end.sql), counting a
-- refusal by the refusing worker's key.
CREATE OR REPLACE FUNCTION xqf_handback(p_worker bigint, p_task bigint, p_token bigint, p_reason text,
                                        p_refused boolean, p_quarantine_after integer)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    v_state text;
    v_run bigint;
    v_key text;
    v_keys integer;
    v_need integer;
BEGIN
    -- The lock order (docs/architecture.md): the task's run first, then
    -- the task.  The coordinator hands back in the same transaction as the
    -- batch's reports and claims, which lock the run: a task locked before
    -- its run there deadlocked with a run's end (xqf_finish_run: the run,
    -- then its tasks), as in a restart storm, whose late answers are
    -- handed back (issue 64); and a refusal may end the run itself below.
    PERFORM 1 FROM runs WHERE id = (SELECT run_id FROM tasks WHERE id = p_task) FOR UPDATE;
    SELECT coalesce(auth_name, name) INTO v_key FROM workers WHERE id = p_worker;
    -- a refusal of a build the worker reported it will not run is about the worker: no key counted
    IF p_refused AND EXISTS (SELECT 1 FROM tasks t JOIN runs r ON r.id = t.run_id
                                JOIN engine_builds b ON b.id IN (r.test_build, r.base_build)
                                JOIN worker_builds wb ON wb.worker_id = p_worker AND wb.sha256 = b.sha256
                               WHERE t.id = p_task AND coalesce(wb.refused, '') <> '') THEN
        v_key := NULL;
    END IF;
    IF p_refused AND v_key IS NOT NULL THEN   -- the cluster's keys are counted for a counting refusal only
        SELECT count(DISTINCT coalesce(auth_name, name)) INTO v_keys
          FROM workers WHERE last_seen > now() - interval '7 days' OR id = p_worker;
        v_need := least(p_quarantine_after, greatest(v_keys, 1));
    END IF;
    UPDATE tasks SET state = CASE WHEN p_refused AND p_quarantine_after > 0 AND v_key IS NOT NULL
                                       AND cardinality(array(SELECT DISTINCT k FROM unnest(refused_keys || v_key) k))
                                           >= v_need
                                  THEN 'quarantined' ELSE 'queued' END,
                     worker_id = NULL, lease_token = NULL, lease_deadline = NULL, last_error = p_reason,
                     refusals = refusals + CASE WHEN p_refused THEN 1 ELSE 0 END,
                     refused_by = CASE WHEN p_refused AND v_key IS NOT NULL AND NOT p_worker = ANY (refused_by)
                                       THEN refused_by || p_worker ELSE refused_by END,
                     refused_keys = CASE WHEN p_refused AND v_key IS NOT NULL AND NOT v_key = ANY (refused_keys)
                                         THEN refused_keys || v_key ELSE refused_keys END,
                     refusal_reasons = CASE WHEN p_refused
                                            THEN (refusal_reasons || p_reason)[greatest(1, cardinality(refusal_reasons) - 8):]
                                            ELSE refusal_reasons END
     WHERE id = p_task AND lease_token = p_token AND state = 'leased' AND worker_id = p_worker
    RETURNING state, run_id INTO v_state, v_run;
    IF NOT FOUND THEN
        RETURN 'stale';
    END IF;
    IF v_state <> 'quarantined' THEN
        RETURN 'ok';
    END IF;
    PERFORM xqf_finish_run(r.id, 'finished', 'max pairs', NULL)
       FROM runs r
      WHERE r.id = v_run AND r.state = 'active' AND r.next_pair >= r.max_pairs
        AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.run_id = r.id AND t.state IN ('queued', 'leased'));
    RETURN 'quarantined';
END $$;
