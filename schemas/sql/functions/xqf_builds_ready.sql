-- A run whose requests are all built starts once its builds are signed:
-- its state after the check ('building' while a build waits for the signer).
CREATE OR REPLACE FUNCTION xqf_builds_ready(p_run bigint) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    r runs%ROWTYPE;
BEGIN
    SELECT * INTO r FROM runs WHERE id = p_run FOR UPDATE;
    IF NOT FOUND OR r.state <> 'building'
       OR EXISTS (SELECT 1 FROM build_requests q WHERE q.run_id = p_run AND q.state <> 'done') THEN
        RETURN r.state;
    END IF;
    IF EXISTS (SELECT 1 FROM engine_builds b WHERE b.id IN (r.test_build, r.base_build) AND b.signature IS NULL) THEN
        RETURN 'building';
    END IF;
    UPDATE runs SET state = r.built_state WHERE id = p_run;
    RETURN r.built_state;
END $$;
