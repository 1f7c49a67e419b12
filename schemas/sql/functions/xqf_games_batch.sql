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
RETURNS bigint LANGUAGE plpgsql
-- Index lookups per record, each statement planned at each call for the
-- tables' sizes now (EXECUTE): a static statement keeps from its sixth call
-- a generic plan made for the sizes of then, and one made while a run was
-- young (a hash join, or a nested loop over a whole table) reads every
-- result or game of every run, so that a batch costs more the longer the
-- cluster has run (tests/test_games.c).  Not plan_cache_mode for the whole
-- function: the foreign-key checks of every inserted row would be planned
-- again each time too.
SET enable_hashjoin = off SET enable_mergejoin = off AS $$
DECLARE
    n bigint;
BEGIN
    -- New FENs first, in a statement of their own: one inserted by another
    -- session meanwhile is seen by the next statement's snapshot.
    -- $1 p_records, $2 p_off, $3 p_len
    EXECUTE $q$
    INSERT INTO game_fens (fen)
    SELECT DISTINCT x.fen
      FROM (SELECT xqf_game_fen(substring($1 FROM u.off + 1 FOR u.len)) AS fen
              FROM unnest($2::integer[], $3::integer[]) AS u(off, len)) AS x
     WHERE NOT EXISTS (SELECT 1 FROM game_fens f WHERE f.fen = x.fen)
    ON CONFLICT DO NOTHING
    $q$ USING p_records, p_off, p_len;
    -- $1 p_task, $2 p_token, $3 p_count, $4 p_records, $5 p_item, $6 p_k, $7 p_off, $8 p_len
    EXECUTE $q$
    WITH src AS (
        -- a record's report by subscript ($5), not by a join of the two lists
        SELECT t.id AS task, t.run_id, 2 * (t.first_pair + r.base_pairs) + x.k - 1 AS game,
               coalesce(r.worker_id, 0) AS worker, u.nodes, u.replay_share AS share,
               substring($4 FROM x.off + 1 FOR x.len) AS rec
          FROM unnest($5::integer[], $6::integer[], $7::integer[], $8::integer[]) AS x(item, k, off, len)
          JOIN tasks t ON t.id = ($1::bigint[])[x.item]
          JOIN results r ON r.task_id = ($1::bigint[])[x.item] AND r.lease_token = ($2::bigint[])[x.item]
                        AND 2 * r.pairs = ($3::integer[])[x.item]
          JOIN runs u ON u.id = t.run_id),
    ins AS (
        INSERT INTO games (run_id, game, worker_id, fen_id, record)
        SELECT src.run_id, src.game, src.worker, f.id, xqf_game_bare(src.rec)
          FROM src JOIN game_fens f ON f.fen = xqf_game_fen(src.rec)
        ON CONFLICT DO NOTHING
        RETURNING run_id, game),
    audit AS (
        -- a game new with this statement: not there in its snapshot, which
        -- ins's rows are not part of (a probe per chosen game, where a join
        -- with ins would compare every record with every other)
        INSERT INTO replay_audits (run_id, pair, task_id, first_worker)
        SELECT src.run_id, src.game / 2, src.task, src.worker
          FROM src
         WHERE src.nodes > 0 AND src.game % 2 = 0 AND xqf_replayed(src.run_id, src.game / 2, src.share)
           AND NOT EXISTS (SELECT 1 FROM games g WHERE g.run_id = src.run_id AND g.game = src.game)
        ON CONFLICT DO NOTHING)
    SELECT count(*) FROM ins
    $q$ INTO n USING p_task, p_token, p_count, p_records, p_item, p_k, p_off, p_len;
    RETURN n;
END $$;
