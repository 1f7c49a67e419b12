-- 036: a third key decides a replay audit's mismatch.
--
-- A mismatch (014_games.sql) says that two workers' records of a pair
-- differ, not which of them lied: an auditor that replies from the pair's
-- opening with other moves flagged the worker that played the pair as
-- well as itself.  Now a mismatch keeps the auditor's two records and
-- queues a second replay of the pair for a worker of a third key (neither
-- the key that played the pair nor the auditor's; 020's rule, applied to
-- both).  Its records decide (arbiter):
--
--   original  they are the pair's stored records: the auditor lied, the
--             audit becomes 'auditor_lied' and flags the auditor only
--   auditor   they are the auditor's: the pair's worker lied, the audit
--             stays 'mismatch' and flags that worker only
--   neither   they differ from both: the audit stays 'mismatch' and both
--             stay flagged (the third worker is not)
--
-- Until the third replay comes (arbiter 'pending' or 'leased', its lease
-- in lease_token and lease_deadline, held by third_worker) a mismatch
-- flags both workers, as before.  The store's RUN_WORKERS reads the blame.
ALTER TABLE replay_audits DROP CONSTRAINT replay_audits_state_check;
ALTER TABLE replay_audits ADD CONSTRAINT replay_audits_state_check
    CHECK (state IN ('pending', 'leased', 'agree', 'mismatch', 'auditor_lied'));
ALTER TABLE replay_audits
    ADD COLUMN replay bytea[],          -- the auditor's two records, kept when they differ
    ADD COLUMN third_worker integer,
    ADD COLUMN arbiter text CHECK (arbiter IN ('pending', 'leased', 'original', 'auditor', 'neither'));
CREATE INDEX replay_audits_arbiter_open ON replay_audits (id) WHERE arbiter IN ('pending', 'leased');

-- Leases the oldest open audit to worker p_worker: a first replay (pending,
-- or its lease run out) of a pair no worker of its key played first, or a
-- third replay of a mismatch that no worker of its key played first nor
-- replayed (and whose pair's games are still stored: a purge takes them).
CREATE OR REPLACE FUNCTION xqf_claim_audit(p_worker bigint, p_build text, p_lease_ms bigint)
RETURNS TABLE (o_audit bigint, o_token bigint, o_run bigint, o_pair bigint, o_params0 text, o_params1 text)
LANGUAGE plpgsql AS $$
DECLARE
    a_id bigint;
    a_third boolean;
    v_key text;
BEGIN
    SELECT coalesce(auth_name, name) INTO v_key FROM workers WHERE id = p_worker;
    SELECT a.id, a.arbiter IS NOT NULL INTO a_id, a_third
      FROM replay_audits a JOIN runs r ON r.id = a.run_id
                           JOIN workers f ON f.id = a.first_worker
                           LEFT JOIN workers s ON s.id = a.second_worker
     WHERE ((a.state = 'pending' OR (a.state = 'leased' AND a.lease_deadline < now()))
            OR ((a.arbiter = 'pending' OR (a.arbiter = 'leased' AND a.lease_deadline < now()))
                AND s.id IS NOT NULL AND a.second_worker <> p_worker
                AND coalesce(s.auth_name, s.name) IS DISTINCT FROM v_key
                AND EXISTS (SELECT 1 FROM games g WHERE g.run_id = a.run_id AND g.game = 2 * a.pair)))
       AND a.first_worker <> p_worker AND coalesce(f.auth_name, f.name) IS DISTINCT FROM v_key
       AND r.state IN ('active', 'finished')
       AND (r.build_id = '' OR r.build_id = p_build)
     ORDER BY a.id LIMIT 1 FOR UPDATE OF a SKIP LOCKED;
    IF a_id IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
    UPDATE replay_audits a
       SET state = CASE WHEN a_third THEN a.state ELSE 'leased' END,
           second_worker = CASE WHEN a_third THEN a.second_worker ELSE p_worker END,
           arbiter = CASE WHEN a_third THEN 'leased' END,
           third_worker = CASE WHEN a_third THEN p_worker END,
           lease_token = nextval('lease_tokens'),
           lease_deadline = now() + p_lease_ms * interval '1 millisecond'
      FROM tasks t WHERE a.id = a_id AND t.id = a.task_id
    RETURNING a.id, a.lease_token, a.run_id, a.pair, t.params0, t.params1;
END $$;

-- Open audits now, first or third replays (of pairs still stored).
CREATE OR REPLACE FUNCTION xqf_open_audits() RETURNS bigint LANGUAGE sql STABLE AS $$
    SELECT (SELECT count(*) FROM replay_audits WHERE state IN ('pending', 'leased'))
         + (SELECT count(*) FROM replay_audits a WHERE a.arbiter IN ('pending', 'leased')
               AND EXISTS (SELECT 1 FROM games g WHERE g.run_id = a.run_id AND g.game = 2 * a.pair))
$$;

-- Whether worker p_worker holds audit row a's lease p_token, first or
-- third replay.
CREATE FUNCTION xqf_audit_held(a replay_audits, p_token bigint, p_worker bigint)
RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(a.lease_token = p_token AND ((a.state = 'leased' AND a.second_worker = p_worker)
                                                 OR (a.arbiter = 'leased' AND a.third_worker = p_worker)), false)
$$;

-- The replay of audit p_audit under lease p_token by worker p_worker: its
-- two records (as xqf_games_batch takes them).  A first replay against the
-- stored ones: agree, or mismatch (its records kept, a third replay
-- queued).  A third replay against both (the verdict above): agree when
-- it is the stored records' (the auditor lied), else mismatch.  Or stale
-- (not this lease), invalid (not two records).
CREATE OR REPLACE FUNCTION xqf_audit_report(p_audit bigint, p_token bigint, p_worker bigint, p_records bytea,
                                            p_off integer[], p_len integer[])
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    a replay_audits%ROWTYPE;
    differs text;
    as_auditor boolean;
    v text;
BEGIN
    SELECT * INTO a FROM replay_audits WHERE id = p_audit FOR UPDATE;
    IF NOT FOUND OR NOT xqf_audit_held(a, p_token, p_worker) THEN
        RETURN 'stale';
    END IF;
    IF coalesce(array_length(p_off, 1), 0) <> 2 THEN
        RETURN 'invalid';
    END IF;
    SELECT string_agg(CASE WHEN g.record IS DISTINCT FROM xqf_game_bare(u.rec) OR f.fen IS DISTINCT FROM xqf_game_fen(u.rec)
                           THEN 'game ' || (2 * a.pair + u.i - 1)::text END, ', ' ORDER BY u.i),
           bool_and(xqf_game_bare(a.replay[u.i]) = xqf_game_bare(u.rec)
                    AND xqf_game_fen(a.replay[u.i]) = xqf_game_fen(u.rec))
      INTO differs, as_auditor
      FROM (SELECT substring(p_records FROM x.off + 1 FOR x.len) AS rec, x.i
              FROM unnest(p_off, p_len) WITH ORDINALITY AS x(off, len, i)) AS u
      LEFT JOIN games g ON g.run_id = a.run_id AND g.game = 2 * a.pair + u.i - 1
      LEFT JOIN game_fens f ON f.id = g.fen_id;
    IF a.state = 'leased' THEN
        UPDATE replay_audits SET state = CASE WHEN differs IS NULL THEN 'agree' ELSE 'mismatch' END,
                                 detail = coalesce(differs || ' differ', ''), finished_at = now(),
                                 lease_token = NULL, lease_deadline = NULL,
                                 replay = CASE WHEN differs IS NOT NULL THEN
                                     ARRAY(SELECT substring(p_records FROM x.off + 1 FOR x.len)
                                             FROM unnest(p_off, p_len) WITH ORDINALITY AS x(off, len, i) ORDER BY x.i)
                                 END,
                                 arbiter = CASE WHEN differs IS NOT NULL THEN 'pending' END
         WHERE id = p_audit;
        RETURN CASE WHEN differs IS NULL THEN 'agree' ELSE 'mismatch' END;
    END IF;
    v := CASE WHEN differs IS NULL THEN 'original' WHEN as_auditor THEN 'auditor' ELSE 'neither' END;
    UPDATE replay_audits SET state = CASE WHEN v = 'original' THEN 'auditor_lied' ELSE state END,
                             arbiter = v, lease_token = NULL, lease_deadline = NULL, finished_at = now(),
                             detail = detail || CASE v WHEN 'original' THEN '; a third key replays the pair''s records'
                                                       WHEN 'auditor' THEN '; a third key replays the auditor''s'
                                                       ELSE '; a third key replays neither' END
     WHERE id = p_audit;
    RETURN CASE WHEN v = 'original' THEN 'agree' ELSE 'mismatch' END;
END $$;

-- Extends an audit's lease, first or third replay ('ok'), or 'stale'.
CREATE OR REPLACE FUNCTION xqf_audit_heartbeat(p_audit bigint, p_token bigint, p_worker bigint, p_lease_ms bigint)
RETURNS text LANGUAGE sql AS $$
    WITH a AS (
        UPDATE replay_audits SET lease_deadline = now() + p_lease_ms * interval '1 millisecond'
         WHERE id = p_audit AND xqf_audit_held(replay_audits, p_token, p_worker)
        RETURNING id)
    SELECT CASE WHEN EXISTS (SELECT 1 FROM a) THEN 'ok' ELSE 'stale' END
$$;

-- Gives an audit back (pending again, first or third replay, for any
-- other worker): 'ok' or 'stale'.
CREATE OR REPLACE FUNCTION xqf_audit_handback(p_audit bigint, p_token bigint, p_worker bigint)
RETURNS text LANGUAGE sql AS $$
    WITH a AS (
        UPDATE replay_audits
           SET state = CASE WHEN arbiter IS NULL THEN 'pending' ELSE state END,
               second_worker = CASE WHEN arbiter IS NULL THEN NULL ELSE second_worker END,
               arbiter = CASE WHEN arbiter IS NULL THEN NULL ELSE 'pending' END,
               third_worker = NULL, lease_token = NULL, lease_deadline = NULL
         WHERE id = p_audit AND xqf_audit_held(replay_audits, p_token, p_worker)
        RETURNING id)
    SELECT CASE WHEN EXISTS (SELECT 1 FROM a) THEN 'ok' ELSE 'stale' END
$$;

SELECT xqf_apply_grants();
