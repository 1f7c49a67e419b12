-- Whether the engine build or net p_sha (its SHA-256 in hex) is one a
-- worker may be given now: a player of an active run, or of a finished
-- run whose replay audits are still open (xqf_claim_audit hands those out
-- after the run ends, and their replays play its builds).  The
-- coordinator serves chunks, and takes bench reports, of these only: a
-- test nobody approved yet (pending, building) has its builds stored but
-- not handed out, and a bench of a SHA-256 no run plays is noise.
CREATE OR REPLACE FUNCTION xqf_artifact_due(p_sha text) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (
        SELECT 1
          FROM runs r
         WHERE (r.test_build IN (SELECT b.id FROM engine_builds b WHERE b.sha256 = p_sha)
                OR r.base_build IN (SELECT b.id FROM engine_builds b WHERE b.sha256 = p_sha)
                OR r.test_net IN (SELECT n.id FROM nets n WHERE n.sha256 = p_sha)
                OR r.base_net IN (SELECT n.id FROM nets n WHERE n.sha256 = p_sha))
           AND (r.state = 'active'
                OR (r.state = 'finished'
                    AND EXISTS (SELECT 1 FROM replay_audits a
                                 WHERE a.run_id = r.id
                                   AND (a.state IN ('pending', 'leased') OR a.arbiter IN ('pending', 'leased'))))))
$$;
