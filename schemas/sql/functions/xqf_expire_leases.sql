-- Requeues the tasks whose lease ran out, marking the expired leases'
-- results (disconnects).  Returns how many tasks.
CREATE OR REPLACE FUNCTION xqf_expire_leases() RETURNS bigint LANGUAGE sql AS $$
    WITH e AS (
        SELECT id, lease_token FROM tasks WHERE state = 'leased' AND lease_deadline < now() FOR UPDATE),
    t AS (
        UPDATE tasks SET state = 'queued', worker_id = NULL, lease_token = NULL,
                         lease_deadline = NULL, last_error = 'lease expired'
          FROM e WHERE tasks.id = e.id
        RETURNING tasks.id),
    r AS (
        UPDATE results x SET expired = true FROM e WHERE x.task_id = e.id AND x.lease_token = e.lease_token)
    SELECT count(*) FROM t
$$;
