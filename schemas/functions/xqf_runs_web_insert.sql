-- A run inserted from the dashboard: its owner and pending state from the
-- session's xqf.owner and xqf.pending.
CREATE OR REPLACE FUNCTION xqf_runs_web_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.owner := coalesce(nullif(current_setting('xqf.owner', true), ''), NEW.owner);
    IF current_setting('xqf.pending', true) = 'on' THEN
        NEW.state := 'pending';
    END IF;
    RETURN NEW;
END $$;
