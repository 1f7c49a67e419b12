-- 042: a run's owner and approval state are the run's settings, written by
-- the one insert (xqf_create_run's last two parameters) instead of a
-- trigger that read them from session settings (xqf.owner, xqf.pending,
-- 011) which the creator set before and cleared after: a creator that
-- failed in between left them on its connection for the next insert.
-- xqf_create_run's old signature goes here (on a fresh database its file
-- has not made it yet: IF EXISTS), its new body is its file's.
DROP TRIGGER IF EXISTS runs_web_insert ON runs;
DROP FUNCTION IF EXISTS xqf_runs_web_insert();

DROP FUNCTION IF EXISTS xqf_create_run(text, text, text, text, text, text[], bigint, bigint, bigint, bigint, bigint, integer,
                             bigint, bigint, bigint, bigint, bigint, bigint, integer, bigint, double precision,
                             double precision, double precision, double precision, integer, text, text, text,
                             jsonb, bigint, bigint, boolean, bigint, bigint, integer, bigint, bigint, bigint,
                             boolean, double precision, text, text);
