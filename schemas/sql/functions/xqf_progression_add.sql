-- A progression (069) and its points in one statement, as xqf-tune
-- progression new and the dashboard's form make them: each point a run
-- made for it (its ref, and its commit, date and subject where they are
-- known, else '' (NULL until the builder pins it: xqf_progression_pin);
-- dates as ISO 8601 text).  The arrays are the points', in one order.  Returns the progression's id, or
-- NULL when a progression of that name exists (nothing is written).
-- grant: xqf_web
CREATE OR REPLACE FUNCTION xqf_progression_add(p_name text, p_engine text, p_base_ref text, p_base_commit text,
                                               p_base_date text, p_base_subject text, p_created_by text,
                                               p_runs bigint[], p_refs text[], p_commits text[],
                                               p_dates text[], p_subjects text[])
RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    v_id bigint;
BEGIN
    INSERT INTO progressions (name, engine, base_ref, base_commit, base_date, base_subject, created_by)
    VALUES (p_name, p_engine, p_base_ref, nullif(p_base_commit, ''), nullif(p_base_date, '')::timestamptz,
            coalesce(p_base_subject, ''),
            coalesce(p_created_by, ''))
    ON CONFLICT (name) DO NOTHING RETURNING id INTO v_id;
    IF v_id IS NULL THEN
        RETURN NULL;
    END IF;
    INSERT INTO progression_points (progression_id, run_id, ref, git_commit, committed_at, subject)
    SELECT v_id, u.run, u.ref, nullif(u.git_commit, ''), nullif(u.at, '')::timestamptz, coalesce(u.subject, '')
      FROM unnest(p_runs, p_refs, p_commits, p_dates, p_subjects) AS u(run, ref, git_commit, at, subject);
    RETURN v_id;
END
$$;
