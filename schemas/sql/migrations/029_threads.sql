-- 029: the search threads each engine of a run's games uses (UCI option
-- Threads, Lazy SMP), as Fishtest's and OpenBench's tests carry a
-- "threads" field: a worker of concurrency C plays at most C / threads of
-- the run's games at once, and one of concurrency below threads is given
-- none of its tasks (coordinator/sched.c).  1: one thread, as every run
-- before this column.
ALTER TABLE runs ADD COLUMN threads integer NOT NULL DEFAULT 1 CHECK (threads BETWEEN 1 AND 64);
