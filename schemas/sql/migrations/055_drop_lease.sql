-- 055: a function nothing calls.
--
-- xqf_lease leased one task to a worker for xqf_claim_task, which 005
-- replaced by batched claims (xqf_claim_batch) and dropped; the lease
-- function stayed behind with no caller.
DROP FUNCTION IF EXISTS xqf_lease(bigint, bigint, bigint);
