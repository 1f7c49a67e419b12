-- A new task of run p_run with the given sets (SPSA: the perturbed ones),
-- taking the run's next pairs, leased at once.  No row when the run is
-- not active or has given out all its pairs.
CREATE OR REPLACE FUNCTION xqf_create_task(p_run bigint, p_worker bigint, p_lease_ms bigint,
                                           p_params0 text, p_params1 text, p_perturbation jsonb)
RETURNS TABLE (o_task bigint, o_token bigint, o_first bigint, o_pairs bigint,
               o_params0 text, o_params1 text)
LANGUAGE plpgsql AS $$
DECLARE
    r runs%ROWTYPE;
    n bigint;
    id bigint;
    token bigint;
BEGIN
    SELECT * INTO r FROM runs WHERE runs.id = p_run AND state = 'active' FOR UPDATE;
    IF NOT FOUND OR r.next_pair >= r.max_pairs THEN
        RETURN;
    END IF;
    n := least(r.pairs_per_task, r.max_pairs - r.next_pair);
    UPDATE runs SET next_pair = next_pair + n WHERE runs.id = p_run;
    INSERT INTO tasks (run_id, first_pair, n_pairs, params0, params1, perturbation, state, worker_id,
                       lease_token, lease_deadline, attempts)
         VALUES (p_run, r.next_pair, n, p_params0, p_params1, p_perturbation, 'leased', p_worker,
                 nextval('lease_tokens'), now() + p_lease_ms * interval '1 millisecond', 1)
      RETURNING tasks.id, lease_token INTO id, token;
    INSERT INTO results (task_id, lease_token, worker_id, base_pairs) VALUES (id, token, p_worker, 0);
    RETURN QUERY SELECT id, token, r.next_pair, n, p_params0, p_params1;
END $$;
