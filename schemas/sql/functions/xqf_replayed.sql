-- Whether pair of run is replayed: HMAC-SHA256 (RFC 2104) of the run and
-- the pair (int8send of each, 16 bytes) under the coordinator's secret
-- (audit_secret, 051), its first 4 bytes as an unsigned number below the
-- share of 2^32.  No one without the key can tell which pairs are chosen
-- from what a task carries (its run and first pair); the share holds, as a
-- keyed hash's outputs are uniform.
CREATE OR REPLACE FUNCTION xqf_replayed(p_run bigint, p_pair bigint, p_share double precision)
RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT ('x' || encode(substring(sha256(s.outer_pad || sha256(s.inner_pad || int8send(p_run) || int8send(p_pair)))
                                    FROM 1 FOR 4), 'hex'))::bit(32)::bigint < p_share * 4294967296
      FROM audit_secret s
$$;
