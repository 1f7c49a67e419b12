-- 014: every game kept, and the trust in workers (docs/programs/xqf-tune.md).
--
-- Every run kind's results carry their games' records (schemas/games.h);
-- data_games of 012 becomes games, one row per game of every run, with the
-- worker whose lease played it.  A record's start FEN is kept apart, once
-- per distinct FEN (a run's games start from its book's lines): the row
-- holds the record with fen_len 0 and the FEN's id.  A 120-ply game of an
-- SPRT (moves only, 2 bytes a ply) is a 245-byte record in a 297-byte row.
--
-- As in 012, games are stored only with an accepted report and only under
-- the range of the reporting lease: a replayed report inserts nothing new
-- (the primary key), a stale one nothing at all.  So the stored games are
-- exactly the counted ones.

CREATE TABLE game_fens (
    id   integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    fen  text NOT NULL UNIQUE
);

-- Columns in this order: no alignment padding.
CREATE TABLE games (
    run_id    bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    game      bigint NOT NULL CHECK (game >= 0),     -- 2 * pair + (0 or 1)
    worker_id integer NOT NULL,                      -- workers.id of the lease (0: unknown, 012's games)
    fen_id    integer NOT NULL REFERENCES game_fens (id),
    record    bytea NOT NULL,                        -- games.h, fen_len 0
    PRIMARY KEY (run_id, game)
);

-- A record's FEN, the record without it, and the two put together again.
CREATE FUNCTION xqf_game_fen(rec bytea) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT convert_from(substring(rec FROM 4 FOR get_byte(rec, 2)), 'UTF8')
$$;
CREATE FUNCTION xqf_game_bare(rec bytea) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
    SELECT substring(rec FROM 1 FOR 2) || '\x00'::bytea || substring(rec FROM 4 + get_byte(rec, 2))
$$;
CREATE FUNCTION xqf_game_full(bare bytea, fen text) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
    SELECT substring(bare FROM 1 FOR 2) || set_byte('\x00'::bytea, 0, octet_length(fen)) ||
           convert_to(fen, 'UTF8') || substring(bare FROM 4)
$$;
-- The plies of a stored (bare) record.
CREATE FUNCTION xqf_game_plies(bare bytea) RETURNS integer LANGUAGE sql IMMUTABLE AS $$
    SELECT get_byte(bare, 3) + 256 * get_byte(bare, 4)
$$;

INSERT INTO game_fens (fen) SELECT DISTINCT xqf_game_fen(record) FROM data_games;
INSERT INTO games (run_id, game, worker_id, fen_id, record)
SELECT d.run_id, d.game, 0, f.id, xqf_game_bare(d.record)
  FROM data_games d JOIN game_fens f ON f.fen = xqf_game_fen(d.record);
DROP FUNCTION xqf_data_games(bigint, bigint, bytea, integer[], integer[], integer[]);
DROP TABLE data_games;

-- A run option: its games' records keep each move's score and depth
-- (xqf-tune sprt/spsa new --keep-scores; data runs always keep scores).
ALTER TABLE runs ADD COLUMN game_scores boolean NOT NULL DEFAULT false;

-- ---- trust in workers -------------------------------------------------------
--
-- Per worker and run: its pairs (results), its games by how they ended
-- (crashes, time losses, illegal moves), and its leases that ran out
-- (disconnects: marked here when they expire).  A purged worker's results
-- stay as rows marked purged, their counts taken out of the task's and the
-- run's counters; its pairs stay played (purged_pairs), so that a later
-- lease of the task does not play them again.
ALTER TABLE results ADD COLUMN expired boolean NOT NULL DEFAULT false;
ALTER TABLE results ADD COLUMN purged boolean NOT NULL DEFAULT false;
ALTER TABLE tasks ADD COLUMN purged_pairs bigint NOT NULL DEFAULT 0;

CREATE OR REPLACE FUNCTION xqf_expire_leases() RETURNS bigint LANGUAGE sql AS $$
    WITH e AS (
        SELECT id, lease_token FROM tasks WHERE state = 'leased' AND lease_deadline < now() FOR UPDATE),
    t AS (
        UPDATE tasks SET state = 'queued', worker_id = NULL, lease_token = NULL,
                         lease_deadline = NULL, last_error = 'lease expired'
          FROM e WHERE tasks.id = e.id
        RETURNING tasks.id),
    r AS (
        UPDATE results x SET expired = true FROM e WHERE x.task_id = e.id AND x.lease_token = e.lease_token)
    SELECT count(*) FROM t
$$;

-- Takes worker p_worker's results out of run p_run (locked first, as
-- reports lock it): its leases in the run are given back to the queue (a
-- late report of them is stale), its results marked purged and their
-- counts subtracted from their tasks and the run, its games deleted.  One
-- row: the pairs and games taken out (0, 0 when it had none).
CREATE FUNCTION xqf_purge_worker(p_run bigint, p_worker bigint)
RETURNS TABLE (o_pairs bigint, o_games bigint) LANGUAGE plpgsql AS $$
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

-- ---- the deterministic replay audit ---------------------------------------------
--
-- A fixed-node run plays the same game again from the same opening with
-- the same sets: a share of its pairs (runs.replay_share, chosen by a hash
-- of the run and the pair) is played again by a second worker, and the two
-- records must be the same bytes (moves, result, reason; scores and depths
-- when kept).  An audit is queued when the pair's games are stored, leased
-- to a worker other than the first (its lease token from lease_tokens,
-- like a task's), and judged when its result comes: agree or mismatch (both
-- workers flagged, the pair named).
ALTER TABLE runs ADD COLUMN replay_share double precision NOT NULL DEFAULT 0.01
    CHECK (replay_share >= 0 AND replay_share <= 1);

CREATE TABLE replay_audits (
    id            bigserial PRIMARY KEY,
    run_id        bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    pair          bigint NOT NULL,
    task_id       bigint NOT NULL,                  -- the task that played it first (its sets)
    first_worker  integer NOT NULL,
    second_worker integer,
    state         text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'leased', 'agree', 'mismatch')),
    lease_token   bigint,
    lease_deadline timestamptz,
    detail        text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz,
    UNIQUE (run_id, pair)
);
CREATE INDEX replay_audits_open ON replay_audits (id) WHERE state IN ('pending', 'leased');

-- Whether pair of run is replayed: a hash of both below its share.
CREATE FUNCTION xqf_replayed(p_run bigint, p_pair bigint, p_share double precision)
RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
    SELECT (hashint8(p_run * 1000003 + p_pair)::bigint + 2147483648) < p_share * 4294967296
$$;

-- The records of the reports of a batch the caller has just had accepted
-- (same transaction), one statement per table for the whole batch: report
-- i is lease (p_task[i], p_token[i]) with p_count[i] records; record j is
-- the p_k[j]-th (1-based) of report p_item[j], at byte p_off[j] (0-based)
-- of p_records, of length p_len[j].  A report's records are stored only
-- when its lease now counts exactly one record per game (2 per pair).
-- The pairs of fixed-node runs chosen for the replay audit get their
-- audit.  Returns the records newly stored.
CREATE FUNCTION xqf_games_batch(p_task bigint[], p_token bigint[], p_count integer[], p_records bytea,
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

-- Leases the oldest open audit (pending, or its lease run out) that
-- worker p_worker did not play first, of a run it can play (build) and
-- that is not stopped.  No row when there is none.
CREATE FUNCTION xqf_claim_audit(p_worker bigint, p_build text, p_lease_ms bigint)
RETURNS TABLE (o_audit bigint, o_token bigint, o_run bigint, o_pair bigint, o_params0 text, o_params1 text)
LANGUAGE plpgsql AS $$
DECLARE
    a_id bigint;
BEGIN
    SELECT a.id INTO a_id FROM replay_audits a JOIN runs r ON r.id = a.run_id
     WHERE (a.state = 'pending' OR (a.state = 'leased' AND a.lease_deadline < now()))
       AND a.first_worker <> p_worker AND r.state IN ('active', 'finished')
       AND (r.build_id = '' OR r.build_id = p_build)
     ORDER BY a.id LIMIT 1 FOR UPDATE OF a SKIP LOCKED;
    IF a_id IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
    UPDATE replay_audits a SET state = 'leased', second_worker = p_worker, lease_token = nextval('lease_tokens'),
                               lease_deadline = now() + p_lease_ms * interval '1 millisecond'
      FROM tasks t WHERE a.id = a_id AND t.id = a.task_id
    RETURNING a.id, a.lease_token, a.run_id, a.pair, t.params0, t.params1;
END $$;

-- Open audits now: the coordinator looks for one to give only when there are.
CREATE FUNCTION xqf_open_audits() RETURNS bigint LANGUAGE sql STABLE AS $$
    SELECT count(*) FROM replay_audits WHERE state IN ('pending', 'leased')
$$;

-- The replay of audit p_audit under lease p_token by worker p_worker: its
-- two records (as xqf_games_batch takes them) against the stored ones.  Status:
-- agree, mismatch, stale (not this lease), invalid (not two records).
CREATE FUNCTION xqf_audit_report(p_audit bigint, p_token bigint, p_worker bigint, p_records bytea,
                                 p_off integer[], p_len integer[])
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    a replay_audits%ROWTYPE;
    differs text;
BEGIN
    SELECT * INTO a FROM replay_audits WHERE id = p_audit FOR UPDATE;
    IF NOT FOUND OR a.state <> 'leased' OR a.lease_token IS DISTINCT FROM p_token
       OR a.second_worker IS DISTINCT FROM p_worker THEN
        RETURN 'stale';
    END IF;
    IF coalesce(array_length(p_off, 1), 0) <> 2 THEN
        RETURN 'invalid';
    END IF;
    SELECT string_agg('game ' || (2 * a.pair + u.i - 1)::text, ', ' ORDER BY u.i) INTO differs
      FROM unnest(p_off, p_len) WITH ORDINALITY AS u(off, len, i)
      LEFT JOIN games g ON g.run_id = a.run_id AND g.game = 2 * a.pair + u.i - 1
      LEFT JOIN game_fens f ON f.id = g.fen_id
     WHERE g.record IS DISTINCT FROM xqf_game_bare(substring(p_records FROM u.off + 1 FOR u.len))
        OR f.fen IS DISTINCT FROM xqf_game_fen(substring(p_records FROM u.off + 1 FOR u.len));
    UPDATE replay_audits SET state = CASE WHEN differs IS NULL THEN 'agree' ELSE 'mismatch' END,
                             detail = coalesce(differs || ' differ', ''), finished_at = now(),
                             lease_token = NULL, lease_deadline = NULL
     WHERE id = p_audit;
    RETURN CASE WHEN differs IS NULL THEN 'agree' ELSE 'mismatch' END;
END $$;

-- Extends an audit's lease ('ok'), or 'stale'.
CREATE FUNCTION xqf_audit_heartbeat(p_audit bigint, p_token bigint, p_worker bigint, p_lease_ms bigint)
RETURNS text LANGUAGE sql AS $$
    WITH a AS (
        UPDATE replay_audits SET lease_deadline = now() + p_lease_ms * interval '1 millisecond'
         WHERE id = p_audit AND lease_token = p_token AND second_worker = p_worker AND state = 'leased'
        RETURNING id)
    SELECT CASE WHEN EXISTS (SELECT 1 FROM a) THEN 'ok' ELSE 'stale' END
$$;

-- Gives an audit back (pending again, for any other worker): 'ok' or 'stale'.
CREATE FUNCTION xqf_audit_handback(p_audit bigint, p_token bigint, p_worker bigint)
RETURNS text LANGUAGE sql AS $$
    WITH a AS (
        UPDATE replay_audits SET state = 'pending', second_worker = NULL, lease_token = NULL, lease_deadline = NULL
         WHERE id = p_audit AND lease_token = p_token AND second_worker = p_worker AND state = 'leased'
        RETURNING id)
    SELECT CASE WHEN EXISTS (SELECT 1 FROM a) THEN 'ok' ELSE 'stale' END
$$;
