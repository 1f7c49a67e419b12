-- What the builder read of a run's ref when it pinned it (xqf_build_pin):
-- the commit, its committer date and subject, written into the run's
-- progression point (its test side) or its progression's base (the base
-- side), where the dashboard's form left them unknown; what xqf-tune
-- progression new resolved itself stays.  A run of no progression: nothing.
-- grant: xqf_builder
CREATE OR REPLACE FUNCTION xqf_progression_pin(p_run bigint, p_side text, p_commit text, p_date timestamptz,
                                               p_subject text)
RETURNS void
LANGUAGE sql SECURITY DEFINER AS $$
    UPDATE progression_points
       SET git_commit = p_commit, committed_at = p_date, subject = left(coalesce(p_subject, ''), 512)
     WHERE run_id = p_run AND p_side = 'test' AND git_commit IS NULL;
    UPDATE progressions p
       SET base_commit = p_commit, base_date = p_date, base_subject = left(coalesce(p_subject, ''), 512)
      FROM progression_points pp
     WHERE pp.run_id = p_run AND pp.progression_id = p.id AND p_side = 'base' AND p.base_commit IS NULL;
$$;
