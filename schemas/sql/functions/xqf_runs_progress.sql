-- A run's counts at each new pair count, kept in run_progress.
CREATE OR REPLACE FUNCTION xqf_runs_progress() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO run_progress (run_id, pairs, wins, draws, losses, ll, ld, dd, wd, ww)
         VALUES (NEW.id, NEW.pairs, NEW.wins, NEW.draws, NEW.losses, NEW.ll, NEW.ld, NEW.dd, NEW.wd, NEW.ww)
    ON CONFLICT (run_id, pairs) DO NOTHING;
    RETURN NULL;
END $$;
