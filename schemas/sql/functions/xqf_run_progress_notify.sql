-- 011: what the web dashboard (xqf-web, docs/web.md) needs.
--
-- Live pages: every committed change of a run's counts, LLR, SPSA
-- iteration or state raises a NOTIFY on "xqf_run_progress" with the run
-- id.  PostgreSQL folds identical notifications of one transaction into
-- one, so a report batch raises one per run it touched; xqf-web throttles
-- further (a few pushes a second per run) before it pushes to browsers.
CREATE OR REPLACE FUNCTION xqf_run_progress_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('xqf_run_progress', NEW.id::text);
    RETURN NULL;
END $$;
