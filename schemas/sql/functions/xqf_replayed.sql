-- Whether pair of run is replayed: a hash of both below its share.
CREATE OR REPLACE FUNCTION xqf_replayed(p_run bigint, p_pair bigint, p_share double precision)
RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
    SELECT (hashint8(p_run * 1000003 + p_pair)::bigint + 2147483648) < p_share * 4294967296
$$;
