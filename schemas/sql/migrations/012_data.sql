-- 012: data-generation runs (kind 'data', docs/programs/xqf-tune.md).  A data run's games
-- are stored compactly, one row per game: its record (schemas/games.h: the
-- start FEN, then per ply the move and the mover's score, 4 bytes a ply)
-- under its run-wide index 2 * pair + (0 or 1).  The run's filter and its
-- random plies are in runs.settings (xqf-tune data new).
--
-- Games are stored only with an accepted report and only under the range
-- of the reporting lease: a replayed report inserts nothing new (the
-- primary key), a stale one nothing at all.  So the stored games are
-- exactly the counted ones: 2 * runs.pairs rows.

CREATE TABLE data_games (
    run_id  bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    game    bigint NOT NULL CHECK (game >= 0),
    plies   integer NOT NULL CHECK (plies >= 0),
    record  bytea NOT NULL,
    PRIMARY KEY (run_id, game)
);

-- The records of a report the caller has just had accepted (same
-- transaction): p_records holds them back to back, the i-th at byte
-- p_off[i] (0-based) of length p_len[i] with p_plies[i] plies.  Stored
-- only when the lease (p_task, p_token) belongs to a data run and now
-- counts exactly one record per game (2 per pair).  Returns the records
-- newly stored.
CREATE FUNCTION xqf_data_games(p_task bigint, p_token bigint, p_records bytea, p_off integer[],
                               p_len integer[], p_plies integer[])
RETURNS bigint LANGUAGE sql AS $$
    WITH lease AS (
        SELECT t.run_id, 2 * (t.first_pair + r.base_pairs) AS first
          FROM tasks t
          JOIN results r ON r.task_id = t.id AND r.lease_token = p_token
          JOIN runs u ON u.id = t.run_id AND u.kind = 'data'
         WHERE t.id = p_task AND 2 * r.pairs = coalesce(array_length(p_off, 1), 0)),
    ins AS (
        INSERT INTO data_games (run_id, game, plies, record)
        SELECT lease.run_id, lease.first + g.i - 1, g.plies, substring(p_records FROM g.off + 1 FOR g.len)
          FROM lease, unnest(p_off, p_len, p_plies) WITH ORDINALITY AS g(off, len, plies, i)
        ON CONFLICT DO NOTHING
        RETURNING 1)
    SELECT count(*) FROM ins;
$$;
