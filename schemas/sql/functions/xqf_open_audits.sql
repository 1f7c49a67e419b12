-- Open audits now, first or third replays (of pairs still stored).
CREATE OR REPLACE FUNCTION xqf_open_audits() RETURNS bigint LANGUAGE sql STABLE AS $$
    SELECT (SELECT count(*) FROM replay_audits WHERE state IN ('pending', 'leased'))
         + (SELECT count(*) FROM replay_audits a WHERE a.arbiter IN ('pending', 'leased')
               AND EXISTS (SELECT 1 FROM games g WHERE g.run_id = a.run_id AND g.game = 2 * a.pair))
$$;
