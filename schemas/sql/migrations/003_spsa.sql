-- 003: SPSA runs (Fishtest's SPSA, tuner/spsa.h) and the progress history of every run.
--
-- An SPSA run keeps theta in run_params (real numbers), the game pairs
-- applied so far in runs.iter and its schedule in runs.settings
-- ({"alpha": .., "gamma": .., "a_ratio": ..}).  Each of its tasks carries
-- its perturbation in tasks.perturbation:
--     {"k": K, "flip": [..], "c_k": [..], "R_k": [..], "plus": [..], "minus": [..]}
-- (arrays in run_params.idx order); the two sets it plays are params0
-- (theta + c_k flip) and params1 (theta - c_k flip).  The update is applied
-- once per task: xqf_spsa_claim_update marks the task first.

ALTER TABLE runs ADD COLUMN iter bigint NOT NULL DEFAULT 0;     -- SPSA: game pairs applied
ALTER TABLE tasks ADD COLUMN spsa_applied_at timestamptz;       -- SPSA: when its update was applied

-- Marks a finished SPSA task's update as applied: true the first time, false
-- afterwards (or when the task is not done): the caller applies theta only on true.
CREATE FUNCTION xqf_spsa_claim_update(p_task bigint) RETURNS boolean
LANGUAGE sql AS $$
    WITH t AS (
        UPDATE tasks SET spsa_applied_at = now()
         WHERE id = p_task AND state = 'done' AND spsa_applied_at IS NULL AND perturbation IS NOT NULL
        RETURNING id)
    SELECT EXISTS (SELECT 1 FROM t)
$$;

-- The cumulative counts of a run each time they change: the report's
-- Elo and LLR over games, rates and ETAs.
CREATE TABLE run_progress (
    run_id      bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    pairs       bigint NOT NULL,
    wins bigint NOT NULL, draws bigint NOT NULL, losses bigint NOT NULL,
    ll bigint NOT NULL, ld bigint NOT NULL, dd bigint NOT NULL, wd bigint NOT NULL, ww bigint NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, pairs)
);

CREATE FUNCTION xqf_runs_progress() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO run_progress (run_id, pairs, wins, draws, losses, ll, ld, dd, wd, ww)
         VALUES (NEW.id, NEW.pairs, NEW.wins, NEW.draws, NEW.losses, NEW.ll, NEW.ld, NEW.dd, NEW.wd, NEW.ww)
    ON CONFLICT (run_id, pairs) DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER runs_progress AFTER UPDATE OF pairs ON runs
    FOR EACH ROW WHEN (NEW.pairs > OLD.pairs) EXECUTE FUNCTION xqf_runs_progress();
