-- A request's progress is its run's: the run's page follows it live.
CREATE OR REPLACE FUNCTION xqf_build_request_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('xqf_run_progress', NEW.run_id::text);
    RETURN NULL;
END $$;
