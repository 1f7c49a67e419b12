-- 010: bounded workers (docs/programs/xqf-coordinator.md, "Bounded peers").
--
-- The coordinator caps the leases a worker holds at about twice the
-- concurrency it announced: before a batch's claims it counts each asking
-- worker's leased tasks, by this index.
CREATE INDEX tasks_leased_worker ON tasks (worker_id) WHERE state = 'leased';

-- Quarantine: a task that workers refused (handed back with refused =
-- true: a bad opening, a build they cannot get, an unknown parameter) a
-- number of times is set aside instead of going round forever, with the
-- latest reasons kept for the operator (status, xqf-tune show).  Lease
-- expiries do not count: a lost worker says nothing about its task.
ALTER TABLE tasks ADD COLUMN refusals integer NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN refusal_reasons text[] NOT NULL DEFAULT '{}';   -- the latest 10
ALTER TABLE tasks DROP CONSTRAINT tasks_state_check;
ALTER TABLE tasks ADD CONSTRAINT tasks_state_check
    CHECK (state IN ('queued', 'leased', 'done', 'cancelled', 'quarantined'));
CREATE INDEX tasks_quarantined ON tasks (run_id) WHERE state = 'quarantined';

-- Gives a leased task back: 'ok' (queued again), 'quarantined' (refused
-- for the p_quarantine_after-th time; <= 0: never), or 'stale'.
DROP FUNCTION xqf_handback(bigint, bigint, bigint, text);
CREATE FUNCTION xqf_handback(p_worker bigint, p_task bigint, p_token bigint, p_reason text,
                             p_refused boolean, p_quarantine_after integer)
RETURNS text LANGUAGE sql AS $$
    WITH t AS (
        UPDATE tasks SET state = CASE WHEN p_refused AND p_quarantine_after > 0
                                           AND refusals + 1 >= p_quarantine_after
                                      THEN 'quarantined' ELSE 'queued' END,
                         worker_id = NULL, lease_token = NULL, lease_deadline = NULL, last_error = p_reason,
                         refusals = refusals + CASE WHEN p_refused THEN 1 ELSE 0 END,
                         refusal_reasons = CASE WHEN p_refused
                                                THEN (refusal_reasons || p_reason)[greatest(1, cardinality(refusal_reasons) - 8):]
                                                ELSE refusal_reasons END
         WHERE id = p_task AND lease_token = p_token AND state = 'leased' AND worker_id = p_worker
        RETURNING state)
    SELECT coalesce((SELECT CASE WHEN state = 'quarantined' THEN 'quarantined' ELSE 'ok' END FROM t), 'stale')
$$;

-- A key's worker names are bounded: a hello under a key that has
-- p_names_max names already, with a name it has not used, is refused
-- (-1); NULL as before when the name belongs to another key.
CREATE INDEX workers_auth_name ON workers (auth_name);
DROP FUNCTION xqf_hello(text, text, integer, integer, text);
CREATE FUNCTION xqf_hello(p_name text, p_build text, p_cores integer, p_concurrency integer, p_auth text,
                          p_names_max integer)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint;
BEGIN
    IF p_auth <> '' AND p_names_max > 0 AND NOT EXISTS (SELECT 1 FROM workers WHERE name = p_name)
       AND (SELECT count(*) FROM workers WHERE auth_name = p_auth) >= p_names_max THEN
        RETURN -1;
    END IF;
    INSERT INTO workers (name, build_id, cores, concurrency, auth_name)
    VALUES (p_name, p_build, p_cores, p_concurrency, nullif(p_auth, ''))
    ON CONFLICT (name) DO UPDATE SET build_id = EXCLUDED.build_id, cores = EXCLUDED.cores,
        concurrency = EXCLUDED.concurrency, last_seen = now(),
        auth_name = coalesce(workers.auth_name, EXCLUDED.auth_name)
     WHERE workers.auth_name IS NULL OR workers.auth_name = EXCLUDED.auth_name
    RETURNING id INTO v_id;
    RETURN v_id;
END $$;
