-- Takes worker p_worker's results out of run p_run (locked first, as
-- reports lock it): its leases in the run are given back to the queue (a
-- late report of them is stale), its results marked purged and their
-- counts subtracted from their tasks and the run, its games deleted.  One
-- row: the pairs and games taken out (0, 0 when it had none).
-- grant: xqf_web
CREATE OR REPLACE FUNCTION xqf_purge_worker(p_run bigint, p_worker bigint)
RETURNS TABLE (o_pairs bigint, o_games bigint) LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    n_pairs bigint;
    n_games bigint;
BEGIN
    PERFORM 1 FROM runs WHERE id = p_run FOR UPDATE;
    PERFORM 1 FROM tasks WHERE run_id = p_run ORDER BY id FOR UPDATE;
    UPDATE tasks SET state = 'queued', worker_id = NULL, lease_token = NULL, lease_deadline = NULL,
                     last_error = 'worker purged'
     WHERE run_id = p_run AND state = 'leased' AND worker_id = p_worker;
    CREATE TEMP TABLE purge_sums ON COMMIT DROP AS
    WITH p AS (
        UPDATE results x SET purged = true FROM tasks t
         WHERE t.id = x.task_id AND t.run_id = p_run AND x.worker_id = p_worker AND NOT x.purged
        RETURNING x.*)
    SELECT task_id, sum(pairs) AS pairs, sum(wins) AS wins, sum(draws) AS draws, sum(losses) AS losses,
           sum(ll) AS ll, sum(ld) AS ld, sum(dd) AS dd, sum(wd) AS wd, sum(ww) AS ww,
           xqf_add_all(reasons) AS reasons
      FROM p GROUP BY task_id;
    UPDATE tasks t SET purged_pairs = t.purged_pairs + p.pairs, wins = t.wins - p.wins,
                       draws = t.draws - p.draws, losses = t.losses - p.losses, ll = t.ll - p.ll,
                       ld = t.ld - p.ld, dd = t.dd - p.dd, wd = t.wd - p.wd, ww = t.ww - p.ww,
                       reasons = xqf_diff(p.reasons, t.reasons)
      FROM purge_sums p WHERE t.id = p.task_id;
    UPDATE runs u SET pairs = u.pairs - s.pairs, wins = u.wins - s.wins, draws = u.draws - s.draws,
                      losses = u.losses - s.losses, ll = u.ll - s.ll, ld = u.ld - s.ld, dd = u.dd - s.dd,
                      wd = u.wd - s.wd, ww = u.ww - s.ww, reasons = xqf_diff(s.reasons, u.reasons)
      FROM (SELECT sum(pairs) AS pairs, sum(wins) AS wins, sum(draws) AS draws, sum(losses) AS losses,
                   sum(ll) AS ll, sum(ld) AS ld, sum(dd) AS dd, sum(wd) AS wd, sum(ww) AS ww,
                   xqf_add_all(reasons) AS reasons
              FROM purge_sums HAVING count(*) > 0) s
     WHERE u.id = p_run;
    SELECT coalesce(sum(pairs), 0) INTO n_pairs FROM purge_sums;
    DROP TABLE purge_sums;
    -- its pairs' open audits would compare against nothing
    DELETE FROM replay_audits WHERE run_id = p_run AND first_worker = p_worker AND state IN ('pending', 'leased');
    WITH d AS (DELETE FROM games WHERE run_id = p_run AND worker_id = p_worker RETURNING 1)
    SELECT count(*) INTO n_games FROM d;
    RETURN QUERY SELECT n_pairs, n_games;
END $$;
