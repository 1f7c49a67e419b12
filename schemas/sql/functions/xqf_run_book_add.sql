-- Records a run's book, once (its row is never changed): the dashboard
-- writes no table of its own, it makes runs through xqf_create_run and
-- their book's row through this, in the same transaction.
-- grant: xqf_web
CREATE OR REPLACE FUNCTION xqf_run_book_add(p_run bigint, p_format text, p_sha256 text, p_openings integer,
                                 p_duplicates integer, p_plies integer, p_scored integer, p_score_min integer,
                                 p_score_max integer, p_score_mean double precision) RETURNS void
LANGUAGE sql SECURITY DEFINER AS $$
    INSERT INTO run_books (run_id, format, sha256, openings, duplicates, plies, scored, score_min, score_max,
                           score_mean)
    VALUES (p_run, p_format, p_sha256, p_openings, p_duplicates, p_plies, p_scored, p_score_min, p_score_max,
            p_score_mean)
$$;
