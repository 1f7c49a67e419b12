-- 041: a run's base side may be another engine than its test side (a
-- gauntlet of ours against Pikafish or ElephantEye as one run, as
-- cutechess plays one): runs.base_engine names the record the base
-- side's build is of, NULL when it is the run's engine (every run made
-- before).  xqf_create_run takes it as its last parameter: its old
-- signature goes here, its new body is its file's.
ALTER TABLE runs ADD COLUMN base_engine text REFERENCES engines(name) ON UPDATE CASCADE;

DROP FUNCTION xqf_create_run(text, text, text, text, text, text[], bigint, bigint, bigint, bigint, bigint, integer,
                             bigint, bigint, bigint, bigint, bigint, bigint, integer, bigint, double precision,
                             double precision, double precision, double precision, integer, text, text, text,
                             jsonb, bigint, bigint, boolean, bigint, bigint, integer, bigint, bigint, bigint,
                             boolean, double precision, text);
