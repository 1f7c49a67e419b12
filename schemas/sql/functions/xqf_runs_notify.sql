-- Runs created, finished or re-prioritised wake the coordinators.
CREATE OR REPLACE FUNCTION xqf_runs_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('xqf_runs', NEW.id::text);
    RETURN NULL;
END $$;
