-- A chain (xqf-tune chain new, the dashboard's chain form): its name and
-- what its SPRTs' base side plays (a build, a net, or the hand-crafted
-- evaluation); its stages follow through xqf_chain_add_stage in the same
-- transaction.  SECURITY DEFINER: the dashboard's role writes no table.
-- Returns its id; NULL (nothing written) when its base net waits for an
-- admin's approval (063: the run service says so first).
-- grant: xqf_web
CREATE OR REPLACE FUNCTION xqf_chain_add(p_name text, p_base_build bigint, p_base_net bigint, p_base_hce boolean)
RETURNS bigint LANGUAGE sql SECURITY DEFINER AS $$
    INSERT INTO chains (name, base_build, base_net, base_hce)
    SELECT p_name, p_base_build, p_base_net, p_base_hce
     WHERE NOT EXISTS (SELECT 1 FROM nets WHERE id = p_base_net AND NOT approved)
    RETURNING id
$$;
