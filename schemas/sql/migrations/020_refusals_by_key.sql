-- 020: no one worker (one key) can sink a run by refusing its tasks, nor audit its own games.
--
-- A refusal (a task handed back as unplayable: a signature or trust the
-- worker will not run, a bench that does not match, an option or opening
-- the engine refuses) used to count towards the task's quarantine
-- whoever sent it, and the task went back to the queue where the same
-- worker could take it again at once: one worker that refused everything
-- quarantined a run's tasks in seconds, and a run whose tasks are all
-- quarantined ends.  Now:
--   - a task is never leased again to a worker that refused it
--     (tasks.refused_by; the claim skips such tasks for such a batch);
--   - a refusal that is about the worker, not the task (a build the
--     worker refused to run: its trust, the signature, its bench, which
--     it reported per build first, worker_builds.refused) counts for no
--     quarantine and is not kept on the task: the scheduler offers that
--     worker no task of that build any more (until the build is
--     registered again), and other workers play the task;
--   - a task is quarantined when workers of p_quarantine_after distinct
--     keys refused it (tasks.refused_keys: a worker's key is its CURVE
--     allow-list name, or its name on a plaintext loopback cluster), or
--     of every key the cluster has (seen within 7 days) when it has
--     fewer: a cluster of one machine still sets an unplayable task aside,
--     and one key among many cannot.
ALTER TABLE tasks ADD COLUMN refused_by bigint[] NOT NULL DEFAULT '{}';
ALTER TABLE tasks ADD COLUMN refused_keys text[] NOT NULL DEFAULT '{}';

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

-- Leases the oldest open audit (see 014_games.sql) that no worker of the
-- same key as p_worker played first: a key may hold many worker names, and
-- an audit by another name of the pair's own key checks nothing.
CREATE OR REPLACE FUNCTION xqf_claim_audit(p_worker bigint, p_build text, p_lease_ms bigint)
RETURNS TABLE (o_audit bigint, o_token bigint, o_run bigint, o_pair bigint, o_params0 text, o_params1 text)
LANGUAGE plpgsql AS $$
DECLARE
    a_id bigint;
    v_key text;
BEGIN
    SELECT coalesce(auth_name, name) INTO v_key FROM workers WHERE id = p_worker;
    SELECT a.id INTO a_id FROM replay_audits a JOIN runs r ON r.id = a.run_id
                          JOIN workers f ON f.id = a.first_worker
     WHERE (a.state = 'pending' OR (a.state = 'leased' AND a.lease_deadline < now()))
       AND a.first_worker <> p_worker AND coalesce(f.auth_name, f.name) IS DISTINCT FROM v_key
       AND r.state IN ('active', 'finished')
       AND (r.build_id = '' OR r.build_id = p_build)
     ORDER BY a.id LIMIT 1 FOR UPDATE OF a SKIP LOCKED;
    IF a_id IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
    UPDATE replay_audits a SET state = 'leased', second_worker = p_worker, lease_token = nextval('lease_tokens'),
                               lease_deadline = now() + p_lease_ms * interval '1 millisecond'
      FROM tasks t WHERE a.id = a_id AND t.id = a.task_id
    RETURNING a.id, a.lease_token, a.run_id, a.pair, t.params0, t.params1;
END $$;
