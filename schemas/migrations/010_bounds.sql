-- 010: bounded workers (issue 15).
--
-- The coordinator caps the leases a worker holds at about twice the
-- concurrency it announced: before a batch's claims it counts each asking
-- worker's leased tasks, by this index.
CREATE INDEX tasks_leased_worker ON tasks (worker_id) WHERE state = 'leased';
