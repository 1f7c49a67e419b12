-- 045: the coordinator times the task leases in memory (coordinator/leases.c)
-- and re-queues those past their deadline by xqf_expire_given: the
-- functions that timed them in the database are called by nothing any
-- more.  A heartbeat no longer writes the lease's deadline (xqf_heartbeat),
-- no scan of the leased tasks looks for deadlines passed
-- (xqf_expire_leases), and a reconnection gives the leases their grace in
-- memory (xqf_extend_leases).
DROP FUNCTION IF EXISTS xqf_heartbeat(bigint, bigint, bigint, bigint);
DROP FUNCTION IF EXISTS xqf_expire_leases();
DROP FUNCTION IF EXISTS xqf_extend_leases(bigint);
