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
    -- The two stored games planned at each call (EXECUTE, as xqf_games_batch):
    -- a plan kept from a young run reads them by the run alone, so every
    -- game of the run.  $1 the run, $2 the pair, $3 the replay kept, $4
    -- p_records, $5 p_off, $6 p_len.
    EXECUTE $q$
    SELECT string_agg(CASE WHEN g.record IS DISTINCT FROM xqf_game_bare(u.rec) OR f.fen IS DISTINCT FROM xqf_game_fen(u.rec)
                           THEN 'game ' || (2 * $2 + u.i - 1)::text END, ', ' ORDER BY u.i),
           bool_and(xqf_game_bare($3[u.i]) = xqf_game_bare(u.rec)
                    AND xqf_game_fen($3[u.i]) = xqf_game_fen(u.rec))
      FROM (SELECT substring($4 FROM x.off + 1 FOR x.len) AS rec, x.i
              FROM unnest($5::integer[], $6::integer[]) WITH ORDINALITY AS x(off, len, i)) AS u
      -- each stored game by its key: a lateral lookup (OFFSET 0 keeps it one),
      -- never a scan of the run's games kept for two (a plan made from
      -- statistics taken before the run had games thinks it holds one)
      LEFT JOIN LATERAL (SELECT s.record, s.fen_id FROM games s
                          WHERE s.run_id = $1 AND s.game = 2 * $2 + u.i - 1 OFFSET 0) g ON true
      LEFT JOIN game_fens f ON f.id = g.fen_id
    $q$ INTO differs, as_auditor USING a.run_id, a.pair, a.replay, p_records, p_off, p_len;
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
