-- 002: the operations on tasks and leases, each one statement for the
-- coordinator (one round trip per message; the coordinator groups a loop's
-- messages into one transaction).  Each returns a status instead of
-- raising for what the network can send (stale leases, bad counts).

-- Element-wise sum of two count arrays of any lengths.
CREATE FUNCTION xqf_add(a bigint[], b bigint[]) RETURNS bigint[]
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    n integer := greatest(coalesce(array_length(a, 1), 0), coalesce(array_length(b, 1), 0));
    out bigint[] := '{}';
BEGIN
    FOR i IN 1 .. n LOOP
        out[i] := coalesce(a[i], 0) + coalesce(b[i], 0);
    END LOOP;
    RETURN out;
END $$;

-- Element-wise b - a, or NULL when some element of b is below a's.
CREATE FUNCTION xqf_diff(a bigint[], b bigint[]) RETURNS bigint[]
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    n integer := greatest(coalesce(array_length(a, 1), 0), coalesce(array_length(b, 1), 0));
    out bigint[] := '{}';
BEGIN
    FOR i IN 1 .. n LOOP
        out[i] := coalesce(b[i], 0) - coalesce(a[i], 0);
        IF out[i] < 0 THEN
            RETURN NULL;
        END IF;
    END LOOP;
    RETURN out;
END $$;

CREATE FUNCTION xqf_sum(a bigint[]) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT coalesce(sum(x), 0)::bigint FROM unnest(a) AS x $$;

-- Runs created, finished or re-prioritised wake the coordinators.
CREATE FUNCTION xqf_runs_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('xqf_runs', NEW.id::text);
    RETURN NULL;
END $$;
CREATE TRIGGER runs_notify AFTER INSERT OR UPDATE OF state, priority ON runs
    FOR EACH ROW EXECUTE FUNCTION xqf_runs_notify();

-- A worker says hello: its row (by name), created or refreshed.
CREATE FUNCTION xqf_hello(p_name text, p_build text, p_cores integer, p_concurrency integer)
RETURNS bigint LANGUAGE sql AS $$
    INSERT INTO workers (name, build_id, cores, concurrency) VALUES (p_name, p_build, p_cores, p_concurrency)
    ON CONFLICT (name) DO UPDATE SET build_id = EXCLUDED.build_id, cores = EXCLUDED.cores,
        concurrency = EXCLUDED.concurrency, last_seen = now()
    RETURNING id
$$;

-- Leases task p_task (locked by the caller) to a worker: a new token, a
-- deadline, an empty result row.  Returns the pairs still to play.
CREATE FUNCTION xqf_lease(p_task bigint, p_worker bigint, p_lease_ms bigint)
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

-- A new task of run p_run with the given sets (SPSA: the perturbed ones),
-- taking the run's next pairs, leased at once.  No row when the run is
-- not active or has given out all its pairs.
CREATE FUNCTION xqf_create_task(p_run bigint, p_worker bigint, p_lease_ms bigint,
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

-- Claims work of run p_run: a queued task (new, expired or handed back)
-- first, else for an SPRT run a new task with the run's two sets.  SPSA
-- runs get new tasks from the coordinator (xqf_create_task with the
-- perturbed sets).  No row when there is nothing to do.
CREATE FUNCTION xqf_claim_task(p_run bigint, p_worker bigint, p_lease_ms bigint)
RETURNS TABLE (o_task bigint, o_token bigint, o_first bigint, o_pairs bigint,
               o_params0 text, o_params1 text)
LANGUAGE plpgsql AS $$
DECLARE
    t_id bigint;
    r runs%ROWTYPE;
BEGIN
    SELECT t.id INTO t_id FROM tasks t JOIN runs ON runs.id = t.run_id
     WHERE t.run_id = p_run AND t.state = 'queued' AND runs.state = 'active'
     ORDER BY t.id LIMIT 1 FOR UPDATE OF t SKIP LOCKED;
    IF t_id IS NOT NULL THEN
        RETURN QUERY SELECT * FROM xqf_lease(t_id, p_worker, p_lease_ms);
        RETURN;
    END IF;
    SELECT * INTO r FROM runs WHERE id = p_run;
    IF FOUND AND r.kind = 'sprt' THEN
        RETURN QUERY SELECT * FROM xqf_create_task(p_run, p_worker, p_lease_ms, r.params0, r.params1, NULL);
    END IF;
END $$;

-- Ends a run (verdict, final LLR): its tasks in flight are cancelled, so
-- their late reports are answered "stale" with stop.  No-op unless active.
CREATE FUNCTION xqf_finish_run(p_run bigint, p_state text, p_verdict text, p_llr double precision)
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    -- Locks the run, then its tasks: the order reports take them.
    PERFORM 1 FROM runs WHERE id = p_run AND state = 'active' FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    UPDATE tasks SET state = 'cancelled', finished_at = now()
     WHERE run_id = p_run AND state IN ('queued', 'leased');
    UPDATE runs SET state = p_state, verdict = p_verdict, llr = coalesce(p_llr, llr), finished_at = now()
     WHERE id = p_run AND state = 'active';
    RETURN FOUND;
END $$;

-- A cumulative report under lease (p_task, p_token).  Applied as its
-- difference from the lease's previous report, so a repeat changes
-- nothing.  Status:
--   accepted   new pairs counted
--   duplicate  same counts as before (lease extended)
--   stale      not the task's current lease (late, expired, run over): ignored, stop
--   invalid    counts inconsistent, decreasing or beyond the task: ignored
CREATE FUNCTION xqf_report(p_task bigint, p_token bigint, p_pairs bigint,
                           p_w bigint, p_d bigint, p_l bigint,
                           p_ll bigint, p_ld bigint, p_dd bigint, p_wd bigint, p_ww bigint,
                           p_reasons bigint[], p_lease_ms bigint)
RETURNS TABLE (o_status text, o_run bigint, o_task_done boolean)
LANGUAGE plpgsql AS $$
DECLARE
    t tasks%ROWTYPE;
    r results%ROWTYPE;
    dr bigint[];
    dp bigint;
BEGIN
    -- Locks the run, then the task: the order every writer uses (no deadlock
    -- between a batch of reports and xqf_finish_run from another session).
    PERFORM 1 FROM runs WHERE id = (SELECT run_id FROM tasks WHERE id = p_task) FOR UPDATE;
    SELECT * INTO t FROM tasks WHERE id = p_task FOR UPDATE;
    IF NOT FOUND OR t.state <> 'leased' OR t.lease_token IS DISTINCT FROM p_token THEN
        RETURN QUERY SELECT 'stale'::text, t.run_id, t.state = 'done';
        RETURN;
    END IF;
    SELECT * INTO r FROM results WHERE task_id = p_task AND lease_token = p_token;
    dr := xqf_diff(r.reasons, p_reasons);
    IF p_pairs < r.pairs OR r.base_pairs + p_pairs > t.n_pairs
       OR p_w < r.wins OR p_d < r.draws OR p_l < r.losses
       OR p_ll < r.ll OR p_ld < r.ld OR p_dd < r.dd OR p_wd < r.wd OR p_ww < r.ww
       OR p_w + p_d + p_l <> 2 * p_pairs OR p_ll + p_ld + p_dd + p_wd + p_ww <> p_pairs
       OR p_l < 2 * p_ll + p_ld OR p_w < 2 * p_ww + p_wd
       OR dr IS NULL OR xqf_sum(p_reasons) <> 2 * p_pairs THEN
        RETURN QUERY SELECT 'invalid'::text, t.run_id, false;
        RETURN;
    END IF;
    IF p_pairs = r.pairs THEN
        UPDATE tasks SET lease_deadline = now() + p_lease_ms * interval '1 millisecond' WHERE id = p_task;
        RETURN QUERY SELECT 'duplicate'::text, t.run_id, false;
        RETURN;
    END IF;
    dp := p_pairs - r.pairs;
    UPDATE results SET pairs = p_pairs, wins = p_w, draws = p_d, losses = p_l,
                       ll = p_ll, ld = p_ld, dd = p_dd, wd = p_wd, ww = p_ww,
                       reasons = p_reasons, reports = reports + 1, updated_at = now()
     WHERE task_id = p_task AND lease_token = p_token;
    UPDATE tasks SET done_pairs = done_pairs + dp,
                     wins = wins + p_w - r.wins, draws = draws + p_d - r.draws, losses = losses + p_l - r.losses,
                     ll = ll + p_ll - r.ll, ld = ld + p_ld - r.ld, dd = dd + p_dd - r.dd,
                     wd = wd + p_wd - r.wd, ww = ww + p_ww - r.ww, reasons = xqf_add(reasons, dr),
                     lease_deadline = now() + p_lease_ms * interval '1 millisecond',
                     state = CASE WHEN done_pairs + dp >= n_pairs THEN 'done' ELSE state END,
                     finished_at = CASE WHEN done_pairs + dp >= n_pairs THEN now() END
     WHERE id = p_task RETURNING * INTO t;
    UPDATE runs SET pairs = pairs + dp,
                    wins = wins + p_w - r.wins, draws = draws + p_d - r.draws, losses = losses + p_l - r.losses,
                    ll = ll + p_ll - r.ll, ld = ld + p_ld - r.ld, dd = dd + p_dd - r.dd,
                    wd = wd + p_wd - r.wd, ww = ww + p_ww - r.ww, reasons = xqf_add(reasons, dr)
     WHERE id = t.run_id;
    IF t.state = 'done' THEN
        IF NOT EXISTS (SELECT 1 FROM runs WHERE id = t.run_id AND next_pair < max_pairs) THEN
            IF NOT EXISTS (SELECT 1 FROM tasks WHERE run_id = t.run_id AND state IN ('queued', 'leased')) THEN
                PERFORM xqf_finish_run(t.run_id, 'finished', 'max pairs', NULL);
            END IF;
        END IF;
    END IF;
    RETURN QUERY SELECT 'accepted'::text, t.run_id, t.state = 'done';
END $$;

-- Extends a lease.  'ok', or 'stale' (the worker should stop the task).
CREATE FUNCTION xqf_heartbeat(p_task bigint, p_token bigint, p_lease_ms bigint)
RETURNS text LANGUAGE sql AS $$
    WITH t AS (
        UPDATE tasks SET lease_deadline = now() + p_lease_ms * interval '1 millisecond'
         WHERE id = p_task AND lease_token = p_token AND state = 'leased'
        RETURNING worker_id)
    SELECT CASE WHEN EXISTS (SELECT 1 FROM t) THEN 'ok' ELSE 'stale' END
$$;

-- Gives a leased task back to the queue (its counted pairs stay counted).
CREATE FUNCTION xqf_handback(p_task bigint, p_token bigint, p_reason text)
RETURNS text LANGUAGE sql AS $$
    WITH t AS (
        UPDATE tasks SET state = 'queued', worker_id = NULL, lease_token = NULL,
                         lease_deadline = NULL, last_error = p_reason
         WHERE id = p_task AND lease_token = p_token AND state = 'leased'
        RETURNING id)
    SELECT CASE WHEN EXISTS (SELECT 1 FROM t) THEN 'ok' ELSE 'stale' END
$$;

-- Re-queues every task whose lease has run out; returns how many.
CREATE FUNCTION xqf_expire_leases() RETURNS bigint LANGUAGE sql AS $$
    WITH t AS (
        UPDATE tasks SET state = 'queued', worker_id = NULL, lease_token = NULL,
                         lease_deadline = NULL, last_error = 'lease expired'
         WHERE state = 'leased' AND lease_deadline < now()
        RETURNING id)
    SELECT count(*) FROM t
$$;

-- After the coordinator lost the database for a while: no lease expires
-- for want of heartbeats it could not record.
CREATE FUNCTION xqf_extend_leases(p_lease_ms bigint) RETURNS bigint LANGUAGE sql AS $$
    WITH t AS (
        UPDATE tasks SET lease_deadline = greatest(lease_deadline, now() + p_lease_ms * interval '1 millisecond')
         WHERE state = 'leased'
        RETURNING id)
    SELECT count(*) FROM t
$$;
