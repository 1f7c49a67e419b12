-- Appends stage p_idx to an active chain that has p_idx stages: stage 0 is
-- the chain's first run (running, a run no chain has), every later one
-- waits with no run yet; anything else is refused (42501) and nothing is
-- written.  So a caller that may add chains (the dashboard's role) cannot
-- rewrite one, nor tie a run it did not just make to a chain's stages.
-- grant: xqf_web
CREATE OR REPLACE FUNCTION xqf_chain_add_stage(p_chain bigint, p_idx integer, p_kind text, p_state text, p_run bigint,
                                               p_elo0 double precision, p_elo1 double precision,
                                               p_alpha double precision, p_beta double precision, p_max_pairs bigint,
                                               p_nodes bigint, p_base_ms bigint, p_inc_ms bigint, p_epochs integer,
                                               p_batch integer, p_lambda double precision, p_lr double precision)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM chains WHERE id = p_chain AND state = 'active')
       OR (SELECT count(*) FROM chain_stages WHERE chain_id = p_chain) <> p_idx
       OR (p_idx = 0) <> (p_run IS NOT NULL)
       OR (p_idx = 0 AND (p_state <> 'running' OR EXISTS (SELECT 1 FROM chain_stages WHERE run_id = p_run)))
       OR (p_idx > 0 AND p_state <> 'waiting') THEN
        RAISE EXCEPTION 'chain %: stage % is not the next of a new chain', p_chain, p_idx USING ERRCODE = '42501';
    END IF;
    INSERT INTO chain_stages (chain_id, idx, kind, state, run_id, elo0, elo1, alpha, beta, max_pairs, nodes, base_ms,
                              inc_ms, epochs, batch, lambda, lr)
    VALUES (p_chain, p_idx, p_kind, p_state, p_run, p_elo0, p_elo1, p_alpha, p_beta, p_max_pairs, p_nodes, p_base_ms,
            p_inc_ms, p_epochs, p_batch, p_lambda, p_lr);
END
$$;
