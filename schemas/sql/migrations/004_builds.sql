-- 004: tuned engine builds (xqf-tune build).  A build made from a
-- run's exported parameters records the run and the parameter set's hash
-- (params_hash, 16 hex digits) next to the binary's SHA-256, its bench
-- signature and its path.  Rebuilding the same binary updates its row.

ALTER TABLE engine_builds ADD COLUMN run_id bigint REFERENCES runs(id) ON DELETE SET NULL;
ALTER TABLE engine_builds ADD COLUMN params_hash text;
CREATE INDEX engine_builds_run ON engine_builds (run_id);
