-- 047: a run's cap on its tasks under lease at once (0: none).
ALTER TABLE runs ADD COLUMN max_leased integer NOT NULL DEFAULT 0;
INSERT INTO run_setting_columns (name) VALUES ('max_leased');
