-- an admin changes a running SPSA tune: its parameters' bounds and end
-- hints (c_end, r_end) and its schedule (alpha, gamma, a_ratio), as
-- Fishtest lets an approver edit a test's SPSA settings.  Each change is
-- one row of the run's history (web_audit, as xqf_modify_run writes).
--
-- The next task's perturbation is drawn from the new settings (the
-- scheduler reads them for each task); a task already given out keeps its
-- c_k and R_k, and its update is clipped to the new bounds.  A theta
-- outside new bounds is moved to the nearer one.  Parameters are neither
-- added nor removed: their order is every task's perturbation's order.
-- grant: xqf_web
CREATE OR REPLACE FUNCTION xqf_modify_spsa(p_run bigint, p_actor text, p_names text[], p_min double precision[],
                                p_max double precision[], p_c_end double precision[], p_r_end double precision[],
                                p_alpha double precision, p_gamma double precision, p_a_ratio double precision)
RETURNS text LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    r runs%ROWTYPE;
    p run_params%ROWTYPE;
    n integer := coalesce(array_length(p_names, 1), 0);
    what text := '';
    v_theta double precision;
    v_old double precision;
BEGIN
    SELECT * INTO r FROM runs WHERE id = p_run FOR UPDATE;
    IF NOT FOUND THEN
        RETURN format('no run %s', p_run);
    END IF;
    IF r.kind <> 'spsa' THEN
        RETURN format('run %s (%s) is not an SPSA run: only an SPSA run has a spec and a schedule', p_run, r.kind);
    END IF;
    IF r.state IN ('finished', 'stopped') THEN
        RETURN format('run %s is %s: only a run that has not ended can be changed', p_run, r.state);
    END IF;
    IF coalesce(array_length(p_min, 1), 0) <> n OR coalesce(array_length(p_max, 1), 0) <> n
       OR coalesce(array_length(p_c_end, 1), 0) <> n OR coalesce(array_length(p_r_end, 1), 0) <> n THEN
        RETURN 'the spec''s columns differ in length';
    END IF;
    -- every line checked before anything changes: all or nothing
    FOR i IN 1 .. n LOOP
        IF NOT EXISTS (SELECT 1 FROM run_params WHERE run_id = p_run AND name = p_names[i]) THEN
            RETURN format('%s is not a parameter of run %s (parameters are not added or removed)', p_names[i], p_run);
        END IF;
        IF NOT (p_min[i] < p_max[i]) THEN
            RETURN format('%s: min %s is not below max %s', p_names[i], p_min[i], p_max[i]);
        END IF;
        IF NOT (p_c_end[i] > 0 AND p_r_end[i] > 0) THEN
            RETURN format('%s: c_end and r_end must be positive', p_names[i]);
        END IF;
    END LOOP;
    IF p_alpha <= 0 OR p_gamma <= 0 OR p_a_ratio < 0 THEN
        RETURN 'alpha and gamma must be positive, a_ratio not negative';
    END IF;
    FOR i IN 1 .. n LOOP
        SELECT * INTO p FROM run_params WHERE run_id = p_run AND name = p_names[i] FOR UPDATE;
        CONTINUE WHEN (p.min, p.max, p.c_end, p.r_end) = (p_min[i], p_max[i], p_c_end[i], p_r_end[i]);
        v_theta := least(greatest(p.theta, p_min[i]), p_max[i]);
        what := what || format(', %s [%s, %s] c_end %s r_end %s -> [%s, %s] c_end %s r_end %s', p.name, p.min, p.max,
                               p.c_end, p.r_end, p_min[i], p_max[i], p_c_end[i], p_r_end[i])
                     || CASE WHEN v_theta <> p.theta THEN format(' (theta %s -> %s)', p.theta, v_theta) ELSE '' END;
        UPDATE run_params SET min = p_min[i], max = p_max[i], c_end = p_c_end[i], r_end = p_r_end[i], theta = v_theta
         WHERE run_id = p_run AND idx = p.idx;
    END LOOP;
    v_old := (r.settings ->> 'alpha')::double precision;
    IF p_alpha IS NOT NULL AND p_alpha IS DISTINCT FROM v_old THEN
        what := what || format(', alpha %s -> %s', v_old, p_alpha);
    END IF;
    v_old := (r.settings ->> 'gamma')::double precision;
    IF p_gamma IS NOT NULL AND p_gamma IS DISTINCT FROM v_old THEN
        what := what || format(', gamma %s -> %s', v_old, p_gamma);
    END IF;
    v_old := (r.settings ->> 'a_ratio')::double precision;
    IF p_a_ratio IS NOT NULL AND p_a_ratio IS DISTINCT FROM v_old THEN
        what := what || format(', a_ratio %s -> %s', v_old, p_a_ratio);
    END IF;
    IF what = '' THEN
        RETURN 'nothing to change';
    END IF;
    UPDATE runs SET settings = coalesce(settings, '{}'::jsonb)
                               || jsonb_strip_nulls(jsonb_build_object('alpha', p_alpha, 'gamma', p_gamma,
                                                                       'a_ratio', p_a_ratio))
     WHERE id = p_run;
    INSERT INTO web_audit (actor, run_id, action, detail) VALUES (p_actor, p_run, 'modify', 'spsa ' || substr(what, 3));
    RETURN '';
END $$;
