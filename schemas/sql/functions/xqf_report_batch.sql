-- A batch of reports (one per worker slot), with the records' check.
CREATE OR REPLACE FUNCTION xqf_report_batch(p_worker bigint[], p_task bigint[], p_token bigint[],
                                            p_pairs bigint[], p_w bigint[], p_d bigint[], p_l bigint[],
                                            p_ll bigint[], p_ld bigint[], p_dd bigint[], p_wd bigint[],
                                            p_ww bigint[], p_reasons text[], p_from bigint[], p_codes text[],
                                            p_lease_ms bigint)
RETURNS TABLE (o_idx integer, o_status text, o_run bigint, o_task_done boolean)
LANGUAGE plpgsql
-- Index lookups per row, whatever the planner guesses of the batch's size
-- (a hash join would scan the whole tasks table); the judging statement
-- planned at each call for the tables' sizes now (EXECUTE, as
-- xqf_games_batch).
SET enable_hashjoin = off SET enable_mergejoin = off AS $$
DECLARE
    v_idx integer[];
    v_status text[];
    v_run bigint[];
    v_done boolean[];
    runs_done bigint[];
BEGIN
    IF coalesce(array_length(p_task, 1), 0) = 0 THEN
        RETURN;
    END IF;
    -- Locks the runs, then the tasks, each in id order: the order every
    -- writer uses (xqf_finish_run, claims), so batches never deadlock.
    PERFORM 1 FROM runs WHERE id IN (SELECT run_id FROM tasks WHERE id = ANY (p_task))
      ORDER BY id FOR UPDATE;
    PERFORM 1 FROM tasks WHERE id = ANY (p_task) ORDER BY id FOR UPDATE;

    -- $1 .. $16: p_worker .. p_lease_ms, in the function's order
    EXECUTE $q$
    WITH x AS (
        SELECT i, task, token, t.run_id AS run, n, rs, r.reasons AS prev_reasons,
               CASE WHEN t.id IS NULL OR t.state <> 'leased' OR t.lease_token IS DISTINCT FROM token
                         OR t.worker_id IS DISTINCT FROM worker THEN 'stale'
                    WHEN r.task_id IS NULL
                         OR n[1] < r.pairs OR r.base_pairs + n[1] > t.n_pairs
                         OR n[2] < r.wins OR n[3] < r.draws OR n[4] < r.losses
                         OR n[5] < r.ll OR n[6] < r.ld OR n[7] < r.dd OR n[8] < r.wd OR n[9] < r.ww
                         OR n[2] + n[3] + n[4] <> 2 * n[1] OR n[5] + n[6] + n[7] + n[8] + n[9] <> n[1]
                         OR n[4] < 2 * n[5] + n[6] OR n[2] < 2 * n[9] + n[8]
                         OR xqf_diff(r.reasons, rs) IS NULL OR xqf_sum(rs) <> 2 * n[1]
                         -- the new pairs' counts are those of their records
                         OR gfrom > r.pairs OR codes !~ '^[a-f]*$' OR length(codes) <> n[1] - gfrom
                         OR xqf_pair_counts(substr(codes, (r.pairs - gfrom)::integer + 1))
                            IS DISTINCT FROM ARRAY[n[2] - r.wins, n[3] - r.draws, n[4] - r.losses, n[5] - r.ll,
                                                   n[6] - r.ld, n[7] - r.dd, n[8] - r.wd, n[9] - r.ww]
                    THEN 'invalid'
                    WHEN n[1] = r.pairs THEN 'duplicate'
                    ELSE 'accepted' END AS status,
               coalesce(t.state = 'done', false) AS was_done,
               t.done_pairs + n[1] - r.pairs >= t.n_pairs AS now_done,
               n[1] - r.pairs AS dp,
               ARRAY[r.pairs, r.wins, r.draws, r.losses, r.ll, r.ld, r.dd, r.wd, r.ww] AS prev
          FROM (SELECT i::integer AS i, worker, task, token, ARRAY[pairs, w, d, l, ll, ld, dd, wd, ww] AS n,
                       rtext::bigint[] AS rs, gfrom, codes
                  FROM unnest($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,
                              $11, $12, $13, $14, $15)
                       WITH ORDINALITY AS u(worker, task, token, pairs, w, d, l, ll, ld, dd, wd, ww,
                                            rtext, gfrom, codes, i)) AS a
               LEFT JOIN tasks t ON t.id = a.task
               LEFT JOIN results r ON r.task_id = a.task AND r.lease_token = a.token),
    acc AS (SELECT * FROM x WHERE status = 'accepted'),
    u_results AS (
        UPDATE results r SET pairs = acc.n[1], wins = acc.n[2], draws = acc.n[3], losses = acc.n[4],
                             ll = acc.n[5], ld = acc.n[6], dd = acc.n[7], wd = acc.n[8], ww = acc.n[9],
                             reasons = acc.rs, reports = r.reports + 1, updated_at = now()
          FROM acc WHERE r.task_id = acc.task AND r.lease_token = acc.token),
    u_tasks AS (
        UPDATE tasks t SET
               done_pairs = t.done_pairs + x.dp,
               wins = t.wins + x.n[2] - x.prev[2], draws = t.draws + x.n[3] - x.prev[3],
               losses = t.losses + x.n[4] - x.prev[4],
               ll = t.ll + x.n[5] - x.prev[5], ld = t.ld + x.n[6] - x.prev[6],
               dd = t.dd + x.n[7] - x.prev[7], wd = t.wd + x.n[8] - x.prev[8],
               ww = t.ww + x.n[9] - x.prev[9],
               reasons = xqf_add(t.reasons, xqf_diff(x.prev_reasons, x.rs)),
               lease_deadline = now() + $16 * interval '1 millisecond',
               state = CASE WHEN x.now_done THEN 'done' ELSE t.state END,
               finished_at = CASE WHEN x.now_done THEN now() END
          FROM x WHERE x.status IN ('accepted', 'duplicate') AND t.id = x.task),
    u_runs AS (
        UPDATE runs u SET pairs = u.pairs + d.dp,
               wins = u.wins + d.w, draws = u.draws + d.d, losses = u.losses + d.l,
               ll = u.ll + d.s_ll, ld = u.ld + d.s_ld, dd = u.dd + d.s_dd, wd = u.wd + d.s_wd,
               ww = u.ww + d.s_ww, reasons = xqf_add(u.reasons, d.dr)
          FROM (SELECT run, sum(dp) AS dp, sum(n[2] - prev[2]) AS w, sum(n[3] - prev[3]) AS d,
                       sum(n[4] - prev[4]) AS l, sum(n[5] - prev[5]) AS s_ll, sum(n[6] - prev[6]) AS s_ld,
                       sum(n[7] - prev[7]) AS s_dd, sum(n[8] - prev[8]) AS s_wd, sum(n[9] - prev[9]) AS s_ww,
                       xqf_add_all(xqf_diff(prev_reasons, rs)) AS dr
                  FROM acc GROUP BY run) d
         WHERE u.id = d.run)
    SELECT array_agg(i ORDER BY i), array_agg(status ORDER BY i), array_agg(run ORDER BY i),
           array_agg(CASE WHEN status = 'accepted' THEN now_done
                          WHEN status = 'stale' THEN was_done ELSE false END ORDER BY i),
           array_agg(DISTINCT run) FILTER (WHERE status = 'accepted' AND now_done)
      FROM x
    $q$ INTO v_idx, v_status, v_run, v_done, runs_done
    USING p_worker, p_task, p_token, p_pairs, p_w, p_d, p_l, p_ll, p_ld, p_dd, p_wd, p_ww, p_reasons, p_from, p_codes, p_lease_ms;

    -- A run whose pairs are all given out and played is over.
    PERFORM xqf_finish_run(r.id, 'finished', 'max pairs', NULL)
       FROM runs r
      WHERE r.id = ANY (coalesce(runs_done, '{}')) AND r.next_pair >= r.max_pairs
        AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.run_id = r.id AND t.state IN ('queued', 'leased'));

    RETURN QUERY SELECT * FROM unnest(v_idx, v_status, v_run, v_done);
END $$;
