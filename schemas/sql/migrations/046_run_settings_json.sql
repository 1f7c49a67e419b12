-- 046: xqf_create_run takes the settings of run_settings.def kept as
-- columns of runs as one JSON object (column: value) instead of a
-- parameter each, so that a new setting is its column and its line in the
-- table, and the function stays as it is.  The dashboard's role calls the
-- function (it may not write runs), so the function writes only the
-- columns named here: a key outside this list (owner, state, approval, any
-- column but a setting's) refuses the whole run.  A new setting's
-- migration adds its column and its row here.
CREATE TABLE run_setting_columns (
    name text PRIMARY KEY
);

INSERT INTO run_setting_columns (name) VALUES
    ('elo0'), ('elo1'), ('alpha'), ('beta'), ('max_pairs'), ('pairs_per_task'), ('priority'), ('seed');

-- the signature of 042 (its new body is the function's file)
DROP FUNCTION IF EXISTS xqf_create_run(text, text, text, text, text, text[], bigint, bigint, bigint, bigint, bigint,
                                       integer, bigint, bigint, bigint, bigint, bigint, bigint, integer, bigint,
                                       double precision, double precision, double precision, double precision,
                                       integer, text, text, text, jsonb, bigint, bigint, boolean, bigint, bigint,
                                       integer, bigint, bigint, bigint, boolean, double precision, text, text, text,
                                       boolean);
