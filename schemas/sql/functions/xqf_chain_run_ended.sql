-- A chain's run ended: its stage passed (an SPSA or data run that played
-- its pairs; an SPRT on H1; the next stage starts), failed or was stopped
-- (the chain ends with it, its stages not started cancelled, as
-- xqf_chain_stop cancels them: nothing is left waiting in an ended chain).
CREATE OR REPLACE FUNCTION xqf_chain_run_ended() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    st chain_stages%ROWTYPE;
    outcome text;
BEGIN
    SELECT s.* INTO st FROM chain_stages s JOIN chains c ON c.id = s.chain_id
     WHERE s.run_id = NEW.id AND s.state = 'running' AND c.state = 'active';
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    outcome := CASE WHEN NEW.state = 'stopped' THEN 'stopped'
                    WHEN st.kind IN ('spsa', 'data') THEN 'passed'
                    WHEN NEW.verdict = 'H1 accepted' THEN 'passed' ELSE 'failed' END;
    UPDATE chain_stages SET state = outcome WHERE chain_id = st.chain_id AND idx = st.idx;
    IF outcome = 'passed' THEN
        PERFORM xqf_chain_start(st.chain_id, st.idx + 1);
    ELSE
        UPDATE chain_stages SET state = 'cancelled' WHERE chain_id = st.chain_id AND state = 'waiting';
        UPDATE chains SET state = outcome, finished_at = now(),
                          note = format('stage %s (%s, run %s): %s', st.idx, st.kind, NEW.id, coalesce(NEW.verdict, NEW.state))
         WHERE id = st.chain_id;
    END IF;
    RETURN NULL;
END $$;
