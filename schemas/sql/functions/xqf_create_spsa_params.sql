-- The tuned parameters of an SPSA run just created, in order (theta
-- starts at start): only for an SPSA run that has none yet and has not
-- started, so that nobody changes what a run tunes once it runs.  Returns
-- how many were added (0: refused).
-- grant: xqf_web
CREATE OR REPLACE FUNCTION xqf_create_spsa_params(p_run bigint, p_names text[], p_start double precision[],
                                                  p_min double precision[], p_max double precision[],
                                                  p_c_end double precision[], p_r_end double precision[])
RETURNS integer LANGUAGE sql SECURITY DEFINER AS $$
    WITH added AS (
        INSERT INTO run_params (run_id, idx, name, start, min, max, c_end, r_end, theta)
        SELECT r.id, u.i - 1, u.name, u.start, u.lo, u.hi, u.c_end, u.r_end, u.start
          FROM runs r, unnest(p_names, p_start, p_min, p_max, p_c_end, p_r_end)
                       WITH ORDINALITY AS u (name, start, lo, hi, c_end, r_end, i)
         WHERE r.id = p_run AND r.kind = 'spsa' AND r.next_pair = 0 AND r.iter = 0
           AND NOT EXISTS (SELECT 1 FROM run_params p WHERE p.run_id = p_run)
        RETURNING 1)
    SELECT count(*)::integer FROM added
$$;
