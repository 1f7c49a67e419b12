-- The last SPSA update is applied after the run ended (in the same
-- transaction as the report that ended it: xqf_report_batch finishes the
-- run, then the coordinator applies the task's update), so an SPRT the
-- chain has already made from it takes the final theta while it has no
-- task yet.
CREATE OR REPLACE FUNCTION xqf_chain_theta() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    UPDATE runs r SET params0 = xqf_spsa_set(NEW.id, false)
      FROM chain_stages own, chain_stages later
     WHERE own.run_id = NEW.id AND later.chain_id = own.chain_id AND later.kind = 'sprt'
       AND later.run_id = r.id AND r.next_pair = 0;
    RETURN NULL;
END $$;
