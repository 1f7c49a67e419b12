-- Marks a finished SPSA task's update as applied: true the first time, false
-- afterwards (or when the task is not done): the caller applies theta only on true.
CREATE OR REPLACE FUNCTION xqf_spsa_claim_update(p_task bigint) RETURNS boolean
LANGUAGE sql AS $$
    WITH t AS (
        UPDATE tasks SET spsa_applied_at = now()
         WHERE id = p_task AND state = 'done' AND spsa_applied_at IS NULL AND perturbation IS NOT NULL
        RETURNING id)
    SELECT EXISTS (SELECT 1 FROM t)
$$;
