-- What a test of git refs changes (064), recorded where its two commits
-- are resolved: the builder's (xqf-tune build --serve) or sprt/games new
-- --test-ref's.  The run's rows are replaced: its refs and commits, the
-- commits between them (p_hashes ... p_dates, newest first, at most 100;
-- p_total how many there are in all) and the diff (p_diff_cut: longer,
-- cut at a line).  Only for the commits the run plays: its test commit
-- must be what a build request of the run was pinned to (the web's
-- tests), or its tree p_test_tree the source of its test build (xqf-tune's:
-- a commit of a tree built before plays that build), so the builder
-- cannot dress another run with a diff.  A run unnamed, or named only by
-- its refs as the run service names a test of refs ("T vs B"), takes
-- p_name (the refs and the test commit's subject).  Returns whether the
-- run was found.
-- grant: xqf_builder
CREATE OR REPLACE FUNCTION xqf_run_changes(p_run bigint, p_test_ref text, p_base_ref text, p_test_commit text,
                                           p_base_commit text, p_test_tree text, p_total integer, p_hashes text[],
                                           p_subjects text[], p_authors text[], p_dates text[], p_diff text,
                                           p_diff_cut boolean, p_name text)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    r runs%ROWTYPE;
BEGIN
    SELECT * INTO r FROM runs WHERE id = p_run FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM build_requests q
                    WHERE q.run_id = p_run AND q.side = 'test' AND q.git_commit = p_test_commit)
       AND NOT EXISTS (SELECT 1 FROM engine_builds b
                        WHERE b.id = r.test_build AND b.git_tree = p_test_tree) THEN
        RAISE EXCEPTION 'run % does not play commit %', p_run, p_test_commit USING ERRCODE = '22023';
    END IF;
    IF coalesce(array_length(p_hashes, 1), 0) > 100 THEN
        RAISE EXCEPTION 'at most 100 commits' USING ERRCODE = '22023';
    END IF;
    DELETE FROM run_changes WHERE run_id = p_run;
    INSERT INTO run_changes (run_id, test_ref, base_ref, test_commit, base_commit, commits_total, diff, diff_cut)
    VALUES (p_run, p_test_ref, p_base_ref, p_test_commit, p_base_commit, p_total, p_diff, p_diff_cut);
    INSERT INTO run_commits (run_id, n, hash, subject, author, at)
    SELECT p_run, u.i - 1, u.hash, left(u.subject, 512), left(u.author, 255), left(u.at, 40)
      FROM unnest(p_hashes, p_subjects, p_authors, p_dates) WITH ORDINALITY AS u(hash, subject, author, at, i);
    IF coalesce(p_name, '') <> '' AND (r.name = '' OR r.name = p_test_ref || ' vs ' || p_base_ref) THEN
        UPDATE runs SET name = left(p_name, 511) WHERE id = p_run;
    END IF;
    RETURN true;
END $$;
