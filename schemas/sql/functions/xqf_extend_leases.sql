-- After the coordinator lost the database for a while: no lease expires
-- for want of heartbeats it could not record.
CREATE OR REPLACE FUNCTION xqf_extend_leases(p_lease_ms bigint) RETURNS bigint LANGUAGE sql AS $$
    WITH t AS (
        UPDATE tasks SET lease_deadline = greatest(lease_deadline, now() + p_lease_ms * interval '1 millisecond')
         WHERE state = 'leased'
        RETURNING id)
    SELECT count(*) FROM t
$$;
