-- Requeues the tasks p_tasks[i] still leased under the lease tokens
-- p_tokens[i] (the coordinator keeps the leases' deadlines in memory and
-- names those that passed), marking those leases' results expired.  A
-- lease that ended meanwhile (its task done, handed back, purged) is
-- passed over.  Found by the tasks' primary key, not by a scan of the
-- leased tasks.  Returns how many tasks.
CREATE OR REPLACE FUNCTION xqf_expire_given(p_tasks bigint[], p_tokens bigint[]) RETURNS bigint LANGUAGE sql AS $$
    -- The lock order (docs/architecture.md): the tasks' runs first, by id,
    -- then the tasks, by id.  Tasks locked without their run deadlocked
    -- with a run's end (xqf_finish_run: a verdict, a stop, the load
    -- generator's end), which held the run and locked the run's tasks in
    -- the order its scan met them, not by id (issue 64, a restart storm).
    SELECT 1 FROM runs WHERE id IN (SELECT run_id FROM tasks WHERE id = ANY (p_tasks)) ORDER BY id FOR UPDATE;
    WITH g AS (
        SELECT * FROM unnest(p_tasks, p_tokens) AS g(task, token)),
    e AS (
        SELECT t.id, t.lease_token FROM tasks t JOIN g ON t.id = g.task AND t.lease_token = g.token
         WHERE t.state = 'leased' ORDER BY t.id FOR UPDATE OF t),
    t AS (
        UPDATE tasks SET state = 'queued', worker_id = NULL, lease_token = NULL,
                         lease_deadline = NULL, last_error = 'lease expired'
          FROM e WHERE tasks.id = e.id
        RETURNING tasks.id),
    r AS (
        UPDATE results x SET expired = true FROM e WHERE x.task_id = e.id AND x.lease_token = e.lease_token)
    SELECT count(*) FROM t
$$;
