-- The set an SPSA run tunes to: its fixed set and theta rounded (what
-- xqf-tune export writes), or its start values (start true).
CREATE OR REPLACE FUNCTION xqf_spsa_set(p_run bigint, p_start boolean) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT concat_ws(',', nullif(r.params0, ''),
                     (SELECT string_agg(p.name || '=' || round(CASE WHEN p_start THEN p.start ELSE p.theta END)::bigint,
                                        ',' ORDER BY p.idx)
                        FROM run_params p WHERE p.run_id = r.id))
      FROM runs r WHERE r.id = p_run
$$;
