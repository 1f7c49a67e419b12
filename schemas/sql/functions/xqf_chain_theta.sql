-- An SPSA run's update that comes after the chain made its SPRT (in a
-- later transaction: the coordinator applies a run's last update in the
-- transaction that ended it, and the chain makes its SPRT at that commit,
-- 049) still reaches the SPRT while it has given out no task.
CREATE OR REPLACE FUNCTION xqf_chain_theta() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    UPDATE runs r SET params0 = xqf_spsa_set(NEW.id, false)
      FROM chain_stages own, chain_stages later
     WHERE own.run_id = NEW.id AND later.chain_id = own.chain_id AND later.kind = 'sprt'
       AND later.run_id = r.id AND r.next_pair = 0 AND r.state = 'active';
    RETURN NULL;
END $$;
