-- 008: the kind of a run is the coordinator's table (schemas/run_kinds.def):
-- the database no longer lists the kinds, and what it did by kind (SPRT
-- runs get new tasks when a worker claims; SPSA runs get theirs from the
-- coordinator) is a property of each run, written by the store from the
-- table.  xqf_claim_batch is 005's with that one condition.

ALTER TABLE runs DROP CONSTRAINT runs_kind_check;
ALTER TABLE runs ADD COLUMN tasks_on_claim boolean;
UPDATE runs SET tasks_on_claim = (kind = 'sprt');
ALTER TABLE runs ALTER COLUMN tasks_on_claim SET NOT NULL;

-- Claims for several workers at once from run p_run: queued tasks (new,
-- expired or handed back) first, oldest first; then, for a run whose kind
-- makes tasks on claim, new tasks of the run's next pairs with its two sets.  One row per lease
-- given, with the index (1-based) of the worker in p_workers it went to;
-- workers left without a row get nothing from this run.
CREATE OR REPLACE FUNCTION xqf_claim_batch(p_run bigint, p_workers bigint[], p_lease_ms bigint)
RETURNS TABLE (o_idx integer, o_task bigint, o_token bigint, o_first bigint, o_pairs bigint,
               o_params0 text, o_params1 text)
LANGUAGE plpgsql SET enable_hashjoin = off SET enable_mergejoin = off AS $$
DECLARE
    want integer := coalesce(array_length(p_workers, 1), 0);
    r runs%ROWTYPE;
    queued bigint[];
    got integer;
    fresh integer := 0;
BEGIN
    -- The run first (the lock order), and only an active one.
    SELECT * INTO r FROM runs WHERE id = p_run AND state = 'active' FOR UPDATE;
    IF NOT FOUND OR want = 0 THEN
        RETURN;
    END IF;
    SELECT coalesce(array_agg(id ORDER BY id), '{}') INTO queued
      FROM (SELECT id FROM tasks WHERE run_id = p_run AND state = 'queued'
             ORDER BY id LIMIT want FOR UPDATE SKIP LOCKED) q;
    got := coalesce(array_length(queued, 1), 0);
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
          FROM unnest(queued) WITH ORDINALITY AS c(task, i)
         WHERE t.id = c.task
        RETURNING c.i::integer AS i, t.id, t.lease_token, t.first_pair + t.done_pairs AS first,
                  t.n_pairs - t.done_pairs AS n, t.done_pairs AS base, t.params0, t.params1),
    mk AS (
        INSERT INTO tasks (run_id, first_pair, n_pairs, params0, params1, state, worker_id,
                           lease_token, lease_deadline, attempts)
        SELECT p_run, r.next_pair + (j - 1) * r.pairs_per_task,
               least(r.pairs_per_task, r.max_pairs - r.next_pair - (j - 1) * r.pairs_per_task),
               r.params0, r.params1, 'leased', p_workers[got + j], nextval('lease_tokens'),
               now() + p_lease_ms * interval '1 millisecond', 1
          FROM generate_series(1, fresh) AS j
        RETURNING (got + (first_pair - r.next_pair) / r.pairs_per_task + 1)::integer AS i, id,
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
