-- 062: a chain is stopped as a whole (the run service's run_chain_stop:
-- xqf-tune chain stop, xqf-web's POST /chains/ID/stop): the run of its
-- running stage stopped, its stages not started yet cancelled, a state of
-- their own (a stopped stage is one that was running when it ended), and
-- the stop recorded in the history the verbs on a run write, web_audit,
-- which now says the chain an action was done to.
ALTER TABLE chain_stages DROP CONSTRAINT chain_stages_state_check;
ALTER TABLE chain_stages ADD CONSTRAINT chain_stages_state_check
    CHECK (state IN ('waiting', 'running', 'passed', 'failed', 'stopped', 'cancelled'));

ALTER TABLE web_audit ADD COLUMN chain_id bigint REFERENCES chains (id) ON DELETE CASCADE;
CREATE INDEX web_audit_chain ON web_audit (chain_id, id) WHERE chain_id IS NOT NULL;

-- the signature of 030: xqf_audit takes the chain too (its new body is the function's file)
DROP FUNCTION xqf_audit(text, bigint, text, text);

-- xqf_chain_stop is the dashboard's to call (granted by its file's line).

-- A run's numbers that a front end sets by hand (each engine's threads,
-- the replay share, the hash and the clock's margin) go into
-- xqf_create_run's one JSON object of settings too, which needs them in
-- its allow-list, and out of its parameters (the signature of 061; its
-- new body is the function's file).  A chain's SPRTs still play one
-- thread at the default replay share (xqf_chain_start leaves these two
-- out of what it copies from the first run).
INSERT INTO run_setting_columns (name) VALUES ('threads'), ('replay_share'), ('hash_mb'), ('margin_ms');

DROP FUNCTION IF EXISTS xqf_create_run(text, text, text, text, text, text[], bigint, bigint, bigint, bigint, integer, text, text,
                                       text, jsonb, bigint, bigint, boolean, bigint, bigint, integer, bigint, bigint, bigint,
                                       boolean, double precision, text, text, text, boolean, jsonb);
