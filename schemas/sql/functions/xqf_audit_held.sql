-- Whether worker p_worker holds audit row a's lease p_token, first or
-- third replay.
CREATE OR REPLACE FUNCTION xqf_audit_held(a replay_audits, p_token bigint, p_worker bigint)
RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(a.lease_token = p_token AND ((a.state = 'leased' AND a.second_worker = p_worker)
                                                 OR (a.arbiter = 'leased' AND a.third_worker = p_worker)), false)
$$;
