-- Starts stage p_idx of chain p_chain (the stage before passed), or ends
-- the chain as passed when there is none.  An SPRT is made from the
-- chain's first run: after an SPSA run, its tuned set (on the latest
-- build) against its start set, each side with the SPSA run's net (the
-- nets are carried: a run tuned with a net is tested with it); after a
-- data run, the latest registered net of the chain (test) against the
-- chain's base (base_net, none, or the engine's own evaluation), both
-- sides on the data run's set and engine.  The first run's settings of
-- run_setting_columns (046) that the stage does not set (its bounds,
-- pair cap and clock: the clock and time odds are settings too, 071) are copied by name after the insert (pairs_per_task, which
-- has no default, with it too): a new run setting's column reaches a
-- chain's SPRTs with no change here.  But for the engines' threads and
-- the replay share (062): a chain's SPRTs play one thread, and replay 1 %
-- of their pairs, whatever the first run played (its columns' defaults).  An SPRT with nothing to test (one
-- engine on both sides: the same set, build, net, evaluation, engine and
-- clock, as when an SPSA ends on its start set) would play its whole pair
-- cap for an H0 the SPSA already gave: it ends at once, before its first
-- task, and the chain fails with its verdict.  Called at the commit of
-- the transaction that ended the stage before (runs_chain is deferred,
-- 049), so an SPSA's last update, applied after its end, is in theta.
CREATE OR REPLACE FUNCTION xqf_chain_start(p_chain bigint, p_idx integer) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    st chain_stages%ROWTYPE;
    first runs%ROWTYPE;
    c chains%ROWTYPE;
    built bigint;
    net bigint;
    id bigint;
    cols text;
BEGIN
    SELECT * INTO c FROM chains WHERE chains.id = p_chain FOR UPDATE;
    SELECT * INTO st FROM chain_stages WHERE chain_id = p_chain AND idx = p_idx;
    IF NOT FOUND THEN
        UPDATE chains SET state = 'passed', note = 'every stage passed', finished_at = now() WHERE chains.id = p_chain;
        RETURN;
    END IF;
    IF st.kind IN ('build', 'train', 'net') THEN
        UPDATE chain_stages SET state = 'running' WHERE chain_id = p_chain AND idx = p_idx;
        RETURN;
    END IF;
    SELECT r.* INTO first FROM chain_stages s JOIN runs r ON r.id = s.run_id
     WHERE s.chain_id = p_chain AND s.kind IN ('spsa', 'data') AND s.idx < p_idx ORDER BY s.idx DESC LIMIT 1;
    IF first.kind = 'data' THEN
        SELECT s.net_id INTO net FROM chain_stages s
         WHERE s.chain_id = p_chain AND s.kind = 'net' AND s.idx < p_idx ORDER BY s.idx DESC LIMIT 1;
        INSERT INTO runs (kind, name, name0, params0, name1, params1, build_id, book_name, book, nodes,
                          base_ms, inc_ms, margin_ms, hash_mb, resign_moves, resign_score, draw_after, draw_moves,
                          draw_score, max_plies, pairs_per_task, max_pairs, elo0, elo1, alpha, beta,
                          settings, test_build, base_build, tasks_on_claim, owner, throughput, test_net, base_net,
                          test_hce, base_hce)
        SELECT 'sprt', format('chain %s stage %s', p_chain, p_idx) || CASE WHEN c.name <> '' THEN ': ' || c.name ELSE '' END,
               'test', first.params0, 'base', first.params0, '', first.book_name, first.book, st.nodes,
               st.base_ms, st.inc_ms, first.margin_ms, first.hash_mb, first.resign_moves, first.resign_score,
               first.draw_after, first.draw_moves, first.draw_score, first.max_plies, first.pairs_per_task,
               st.max_pairs, st.elo0, st.elo1, st.alpha, st.beta, '{}', first.test_build,
               first.test_build, true, first.owner, first.throughput, net, c.base_net, false, c.base_hce
        RETURNING runs.id INTO id;
    ELSE
        SELECT s.build_id INTO built FROM chain_stages s
         WHERE s.chain_id = p_chain AND s.kind = 'build' AND s.idx < p_idx ORDER BY s.idx DESC LIMIT 1;
        INSERT INTO runs (kind, name, name0, params0, name1, params1, build_id, book_name, book, nodes,
                          base_ms, inc_ms, margin_ms, hash_mb, resign_moves, resign_score, draw_after, draw_moves,
                          draw_score, max_plies, pairs_per_task, max_pairs, elo0, elo1, alpha, beta,
                          settings, test_build, base_build, tasks_on_claim, owner, throughput, test_net, base_net,
                          test_hce, base_hce)
        SELECT 'sprt', format('chain %s stage %s', p_chain, p_idx) || CASE WHEN c.name <> '' THEN ': ' || c.name ELSE '' END,
               'test', xqf_spsa_set(first.id, false), 'base', xqf_spsa_set(first.id, true), '', first.book_name,
               first.book, st.nodes, st.base_ms, st.inc_ms, first.margin_ms, first.hash_mb,
               first.resign_moves, first.resign_score, first.draw_after, first.draw_moves, first.draw_score,
               first.max_plies, first.pairs_per_task, st.max_pairs, st.elo0, st.elo1, st.alpha, st.beta,
               '{}', built, c.base_build, true, first.owner, first.throughput,
               first.test_net, first.base_net, first.test_hce, first.base_hce
        RETURNING runs.id INTO id;
    END IF;
    SELECT string_agg(quote_ident(name), ', ' ORDER BY name) INTO cols FROM run_setting_columns
     WHERE name NOT IN ('elo0', 'elo1', 'alpha', 'beta', 'max_pairs', 'threads', 'replay_share', 'base_ms', 'inc_ms',
                        'base1_ms', 'inc1_ms');
    IF cols IS NOT NULL THEN
        EXECUTE format('UPDATE runs SET (%1$s) = (SELECT %1$s FROM runs WHERE id = $1) WHERE id = $2', cols)
          USING first.id, id;
    END IF;
    UPDATE chain_stages SET state = 'running', run_id = id WHERE chain_id = p_chain AND idx = p_idx;
    PERFORM xqf_finish_run(r.id, 'finished', 'nothing to test: both sides are one engine', NULL)
       FROM runs r
      WHERE r.id = (SELECT s.run_id FROM chain_stages s WHERE s.chain_id = p_chain AND s.idx = p_idx)
        AND r.params0 = r.params1 AND r.test_build IS NOT DISTINCT FROM r.base_build
        AND r.test_net IS NOT DISTINCT FROM r.base_net AND r.test_hce = r.base_hce
        AND coalesce(r.base_engine, r.engine) = r.engine
        AND (r.base1_ms = 0 OR (r.base1_ms = r.base_ms AND r.inc1_ms = r.inc_ms));
END $$;
