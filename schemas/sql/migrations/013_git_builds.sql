-- 013: tests from git, and workers that check what they run (docs/programs/xqf-tune.md, docs/cluster.md).
--
-- A build made from a git commit (xqf-tune build --ref, sprt new
-- --test-ref/--base-ref) records the commit, its tree (a later commit of
-- the same tree reuses the build) and the commit's subject.
ALTER TABLE engine_builds ADD COLUMN git_commit text CHECK (git_commit ~ '^[0-9a-f]{40,64}$');
ALTER TABLE engine_builds ADD COLUMN git_tree text CHECK (git_tree ~ '^[0-9a-f]{40,64}$');
ALTER TABLE engine_builds ADD COLUMN git_subject text;
CREATE INDEX engine_builds_tree ON engine_builds (git_tree);

-- What each worker found when it first ran a build's bench: the bench
-- signature and its nodes per second on that machine; refused holds the
-- reason when the signature was not the recorded one (a wrong
-- architecture, another libc, a miscompile): the coordinator then offers
-- no task of that build to that worker.  sha256 '' is the worker's own
-- engine.
CREATE TABLE worker_builds (
    worker_id   bigint NOT NULL REFERENCES workers (id) ON DELETE CASCADE,
    sha256      text NOT NULL CHECK (sha256 = '' OR sha256 ~ '^[0-9a-f]{64}$'),
    bench_nodes bigint NOT NULL,
    nps         bigint NOT NULL,
    refused     text,
    measured_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (worker_id, sha256)
);

-- A run with ref_nps > 0 has its clock scaled on each worker by ref_nps /
-- (the worker's nodes per second for the run's engines), as Fishtest does
-- for mixed hardware (xqf-tune sprt/spsa new --tc-scale).
ALTER TABLE runs ADD COLUMN ref_nps bigint NOT NULL DEFAULT 0 CHECK (ref_nps >= 0);
