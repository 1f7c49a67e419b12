-- Leases task p_task (locked by the caller) to a worker: a new token, a
-- deadline, an empty result row.  Returns the pairs still to play.
CREATE OR REPLACE FUNCTION xqf_lease(p_task bigint, p_worker bigint, p_lease_ms bigint)
RETURNS TABLE (o_task bigint, o_token bigint, o_first bigint, o_pairs bigint,
               o_params0 text, o_params1 text)
LANGUAGE plpgsql AS $$
DECLARE
    t tasks%ROWTYPE;
BEGIN
    UPDATE tasks SET state = 'leased', worker_id = p_worker, lease_token = nextval('lease_tokens'),
                     lease_deadline = now() + p_lease_ms * interval '1 millisecond',
                     attempts = attempts + 1
     WHERE id = p_task RETURNING * INTO t;
    INSERT INTO results (task_id, lease_token, worker_id, base_pairs)
         VALUES (t.id, t.lease_token, p_worker, t.done_pairs);
    RETURN QUERY SELECT t.id, t.lease_token, t.first_pair + t.done_pairs,
                        t.n_pairs - t.done_pairs, t.params0, t.params1;
END $$;
