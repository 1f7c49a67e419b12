-- 061: the adjudication's rules are run settings of run_settings.def (its
-- ADJUDICATION group), so xqf_create_run takes them in its JSON object of
-- settings (046) instead of a parameter each: their columns join the
-- allow-list, and the function loses its six parameters (its new body is
-- the function's file).  Every front end now sets them (xqf-tune's
-- --resign-moves ... --max-plies, xqf-web's new-run forms); a run that
-- sets none plays the defaults it played before (the table's).
INSERT INTO run_setting_columns (name) VALUES
    ('resign_moves'), ('resign_score'), ('draw_after'), ('draw_moves'), ('draw_score'), ('max_plies');

-- the signature of 046 (its new body is the function's file)
DROP FUNCTION IF EXISTS xqf_create_run(text, text, text, text, text, text[], bigint, bigint, bigint, bigint, integer,
                                       bigint, bigint, bigint, bigint, bigint, bigint, text, text, text, jsonb, bigint,
                                       bigint, boolean, bigint, bigint, integer, bigint, bigint, bigint, boolean,
                                       double precision, text, text, text, boolean, jsonb);

-- A caller that leaves a rule out of its JSON (a role calling the
-- function in SQL) gets the rule every run played before: run_settings.def's
-- defaults, which the store writes for a run that sets none.
ALTER TABLE runs ALTER COLUMN resign_moves SET DEFAULT 4, ALTER COLUMN resign_score SET DEFAULT 600,
                 ALTER COLUMN draw_after SET DEFAULT 40, ALTER COLUMN draw_moves SET DEFAULT 8,
                 ALTER COLUMN draw_score SET DEFAULT 10, ALTER COLUMN max_plies SET DEFAULT 0;
