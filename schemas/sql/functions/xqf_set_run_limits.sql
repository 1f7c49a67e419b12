-- The dashboard's modify action: priority, pair cap and pairs per task of
-- a run that has not ended.  Returns 1, or 0 when it has.
-- grant: xqf_web
CREATE OR REPLACE FUNCTION xqf_set_run_limits(p_run bigint, p_priority integer, p_max_pairs bigint, p_pairs_per_task integer)
RETURNS integer LANGUAGE sql SECURITY DEFINER AS $$
    WITH u AS (
        UPDATE runs SET priority = p_priority, max_pairs = p_max_pairs, pairs_per_task = p_pairs_per_task
         WHERE id = p_run AND state IN ('active', 'pending', 'building')
        RETURNING 1)
    SELECT count(*)::integer FROM u
$$;
