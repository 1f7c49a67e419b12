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

INSERT INTO role_grants (role, kind, object, privileges) VALUES
    ('xqf_web', 'function', 'xqf_chain_stop', 'EXECUTE');
