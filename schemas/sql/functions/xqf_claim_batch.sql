-- The batch claim of 008_run_kinds.sql, where no slot gets a task its
-- worker refused: when none of the oldest queued tasks was refused (the
-- usual case) they go to the slots in order as before; else each slot
-- takes the oldest queued task its worker did not refuse (a query a slot,
-- only then).  o_idx stays the slot's index in p_workers.
CREATE OR REPLACE FUNCTION xqf_claim_batch(p_run bigint, p_workers bigint[], p_lease_ms bigint)
RETURNS TABLE (o_idx integer, o_task bigint, o_token bigint, o_first bigint, o_pairs bigint,
               o_params0 text, o_params1 text)
LANGUAGE plpgsql SET enable_hashjoin = off SET enable_mergejoin = off AS $$
DECLARE
    want integer := coalesce(array_length(p_workers, 1), 0);
    r runs%ROWTYPE;
    queued bigint[];
    slots integer[] := '{}';         -- the slot (index in p_workers) of each queued task
    rest integer[];                  -- the slots left for fresh tasks
    refused boolean;
    v_task bigint;
    got integer;
    fresh integer := 0;
BEGIN
    -- The run first (the lock order), and only an active one.
    SELECT * INTO r FROM runs WHERE id = p_run AND state = 'active' FOR UPDATE;
    IF NOT FOUND OR want = 0 THEN
        RETURN;
    END IF;
    SELECT coalesce(array_agg(id ORDER BY id), '{}'), coalesce(bool_or(cardinality(refused_by) > 0), false)
      INTO queued, refused
      FROM (SELECT id, refused_by FROM tasks WHERE run_id = p_run AND state = 'queued'
             ORDER BY id LIMIT want FOR UPDATE SKIP LOCKED) q;
    IF NOT refused THEN
        slots := array(SELECT generate_series(1, coalesce(array_length(queued, 1), 0)));
    ELSE
        queued := '{}';
        FOR i IN 1 .. want LOOP
            SELECT id INTO v_task FROM tasks
             WHERE run_id = p_run AND state = 'queued' AND NOT (p_workers[i] = ANY (refused_by))
               AND NOT (id = ANY (queued))
             ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED;
            IF FOUND THEN
                queued := queued || v_task;
                slots := slots || i;
            END IF;
        END LOOP;
    END IF;
    got := coalesce(array_length(queued, 1), 0);
    rest := array(SELECT s FROM generate_series(1, want) s WHERE NOT (s = ANY (slots)) ORDER BY s);
    IF got < want AND r.tasks_on_claim AND r.next_pair < r.max_pairs THEN
        fresh := least((want - got)::bigint,
                       (r.max_pairs - r.next_pair + r.pairs_per_task - 1) / r.pairs_per_task)::integer;
    END IF;

    RETURN QUERY
    WITH lq AS (
        UPDATE tasks t SET state = 'leased', worker_id = p_workers[c.i],
                           lease_token = nextval('lease_tokens'),
                           lease_deadline = now() + p_lease_ms * interval '1 millisecond',
                           attempts = attempts + 1
          FROM unnest(queued, slots) AS c(task, i)
         WHERE t.id = c.task
        RETURNING c.i::integer AS i, t.id, t.lease_token, t.first_pair + t.done_pairs AS first,
                  t.n_pairs - t.done_pairs AS n, t.done_pairs AS base, t.params0, t.params1),
    mk AS (
        INSERT INTO tasks (run_id, first_pair, n_pairs, params0, params1, state, worker_id,
                           lease_token, lease_deadline, attempts)
        SELECT p_run, r.next_pair + (j - 1) * r.pairs_per_task,
               least(r.pairs_per_task, r.max_pairs - r.next_pair - (j - 1) * r.pairs_per_task),
               r.params0, r.params1, 'leased', p_workers[rest[j]], nextval('lease_tokens'),
               now() + p_lease_ms * interval '1 millisecond', 1
          FROM generate_series(1, fresh) AS j
        RETURNING rest[(first_pair - r.next_pair) / r.pairs_per_task + 1]::integer AS i, id,
                  lease_token, first_pair AS first, n_pairs::bigint AS n, 0::bigint AS base,
                  params0, params1),
    given AS (SELECT * FROM lq UNION ALL SELECT * FROM mk),
    res AS (
        INSERT INTO results (task_id, lease_token, worker_id, base_pairs)
        SELECT id, lease_token, p_workers[i], base FROM given),
    nxt AS (
        UPDATE runs SET next_pair = least(max_pairs, next_pair + fresh::bigint * pairs_per_task)
         WHERE id = p_run AND fresh > 0)
    SELECT i, id, lease_token, first, n, params0, params1 FROM given ORDER BY i;
END $$;
