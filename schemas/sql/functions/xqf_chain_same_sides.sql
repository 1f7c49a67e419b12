-- A chain's SPRT whose two sides are one engine (the SPSA's rounded set is
-- its start set, on the same build, net and clock) has nothing to test: it
-- would play its whole pair cap for an H0 the parameters already gave.  It
-- ends before its first task, as a finished run with that verdict, and
-- xqf_chain_run_ended fails the chain with it.  Checked at commit (a
-- deferred constraint trigger): the SPSA's last update reaches the SPRT
-- after the chain made it, in the same transaction (xqf_chain_theta), so
-- only the set the SPRT would play is judged.  An SPRT made by hand with
-- one engine on both sides is left alone: it measures the test's own
-- false-positive rate.
CREATE OR REPLACE FUNCTION xqf_chain_same_sides() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    r runs%ROWTYPE;
BEGIN
    SELECT * INTO r FROM runs WHERE id = NEW.id AND state = 'active' AND next_pair = 0 FOR UPDATE;
    IF NOT FOUND OR NOT EXISTS (SELECT 1 FROM chain_stages WHERE run_id = r.id) THEN
        RETURN NULL;
    END IF;
    IF r.params0 = r.params1 AND r.test_build IS NOT DISTINCT FROM r.base_build
       AND r.test_net IS NOT DISTINCT FROM r.base_net AND r.test_hce = r.base_hce
       AND coalesce(r.base_engine, r.engine) = r.engine
       AND (r.base1_ms = 0 OR (r.base1_ms = r.base_ms AND r.inc1_ms = r.inc_ms)) THEN
        PERFORM xqf_finish_run(r.id, 'finished', 'nothing to test: both sides are one engine', NULL);
    END IF;
    RETURN NULL;
END $$;
