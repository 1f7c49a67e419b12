-- The records of the reports of a batch the caller has just had accepted
-- (same transaction), one statement per table for the whole batch: report
-- i is lease (p_task[i], p_token[i]) with p_count[i] records; record j is
-- the p_k[j]-th (1-based) of report p_item[j], at byte p_off[j] (0-based)
-- of p_records, of length p_len[j].  A report's records are stored only
-- when its lease now counts exactly one record per game (2 per pair).
-- The pairs of fixed-node runs chosen for the replay audit get their
-- audit.  Returns the records newly stored.
CREATE OR REPLACE FUNCTION xqf_games_batch(p_task bigint[], p_token bigint[], p_count integer[], p_records bytea,
                                           p_item integer[], p_k integer[], p_off integer[], p_len integer[])
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    -- New FENs first, in a statement of their own: one inserted by another
    -- session meanwhile is seen by the next statement's snapshot.
    INSERT INTO game_fens (fen)
    SELECT DISTINCT x.fen
      FROM (SELECT xqf_game_fen(substring(p_records FROM u.off + 1 FOR u.len)) AS fen
              FROM unnest(p_off, p_len) AS u(off, len)) AS x
     WHERE NOT EXISTS (SELECT 1 FROM game_fens f WHERE f.fen = x.fen)
    ON CONFLICT DO NOTHING;
    WITH src AS (
        SELECT a.task, t.run_id, 2 * (t.first_pair + r.base_pairs) + x.k - 1 AS game,
               coalesce(r.worker_id, 0) AS worker, u.nodes, u.replay_share AS share,
               substring(p_records FROM x.off + 1 FOR x.len) AS rec
          FROM unnest(p_item, p_k, p_off, p_len) AS x(item, k, off, len)
          JOIN unnest(p_task, p_token, p_count) WITH ORDINALITY AS a(task, token, cnt, i) ON a.i = x.item
          JOIN tasks t ON t.id = a.task
          JOIN results r ON r.task_id = a.task AND r.lease_token = a.token AND 2 * r.pairs = a.cnt
          JOIN runs u ON u.id = t.run_id),
    ins AS (
        INSERT INTO games (run_id, game, worker_id, fen_id, record)
        SELECT src.run_id, src.game, src.worker, f.id, xqf_game_bare(src.rec)
          FROM src JOIN game_fens f ON f.fen = xqf_game_fen(src.rec)
        ON CONFLICT DO NOTHING
        RETURNING run_id, game),
    audit AS (
        INSERT INTO replay_audits (run_id, pair, task_id, first_worker)
        SELECT src.run_id, src.game / 2, src.task, src.worker
          FROM src JOIN ins ON ins.run_id = src.run_id AND ins.game = src.game
         WHERE src.nodes > 0 AND src.game % 2 = 0 AND xqf_replayed(src.run_id, src.game / 2, src.share)
        ON CONFLICT DO NOTHING)
    SELECT count(*) INTO n FROM ins;
    RETURN n;
END $$;
