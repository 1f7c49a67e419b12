-- 027: the network's loop closed by the system: chains that carry nets
-- (data run -> training -> the net registered -> SPRT of the new net
-- against the current default), and SPSA chains whose SPRTs play the net
-- their SPSA run played.

-- New stage kinds: 'data' (the chain's first run, a data-generation run
-- made by xqf-tune chain new; passes when it played all its games),
-- 'train' (xqf-tune nnue train on the data run's export: epochs, batch,
-- lambda, lr; done by xqf-tune chain advance on a host with PyTorch) and
-- 'net' (the trained net registered, signed when chain advance has a key:
-- its id in net_id).  Both wait in state 'running' for chain advance, as a
-- build stage does; detail says what was done (or why it failed).
ALTER TABLE chain_stages DROP CONSTRAINT chain_stages_kind_check;
ALTER TABLE chain_stages ADD CONSTRAINT chain_stages_kind_check
    CHECK (kind IN ('spsa', 'build', 'sprt', 'data', 'train', 'net'));
ALTER TABLE chain_stages ADD COLUMN net_id bigint REFERENCES nets(id);
ALTER TABLE chain_stages ADD COLUMN epochs integer CHECK (epochs > 0);
ALTER TABLE chain_stages ADD COLUMN batch integer CHECK (batch > 0);
ALTER TABLE chain_stages ADD COLUMN lambda double precision CHECK (lambda BETWEEN 0 AND 1);
ALTER TABLE chain_stages ADD COLUMN lr double precision CHECK (lr > 0);
ALTER TABLE chain_stages ADD COLUMN detail text NOT NULL DEFAULT '';

-- What the base side of a net chain's SPRTs evaluates with: base_net, or
-- the hand-crafted evaluation (base_hce), or neither: the engine's own
-- evaluation, its compiled-in default net when it has one (the current
-- default).
ALTER TABLE chains ADD COLUMN base_net bigint REFERENCES nets(id);
ALTER TABLE chains ADD COLUMN base_hce boolean NOT NULL DEFAULT false;
ALTER TABLE chains ADD CONSTRAINT chains_base_net_or_hce CHECK (NOT (base_hce AND base_net IS NOT NULL));

-- Starts stage p_idx of chain p_chain (the stage before passed), or ends
-- the chain as passed when there is none.  An SPRT is made from the
-- chain's first run: after an SPSA run, its tuned set (on the latest
-- build) against its start set, each side with the SPSA run's net (the
-- nets are carried: a run tuned with a net is tested with it); after a
-- data run, the latest registered net of the chain (test) against the
-- chain's base (base_net, none, or the engine's own evaluation), both
-- sides on the data run's set and engine.
CREATE OR REPLACE FUNCTION xqf_chain_start(p_chain bigint, p_idx integer) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    st chain_stages%ROWTYPE;
    first runs%ROWTYPE;
    c chains%ROWTYPE;
    built bigint;
    net bigint;
    id bigint;
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
        INSERT INTO runs (kind, name, name0, params0, name1, params1, build_id, book_name, book, seed, nodes,
                          base_ms, inc_ms, margin_ms, hash_mb, resign_moves, resign_score, draw_after, draw_moves,
                          draw_score, max_plies, pairs_per_task, max_pairs, elo0, elo1, alpha, beta, priority,
                          settings, test_build, base_build, tasks_on_claim, owner, throughput, test_net, base_net,
                          test_hce, base_hce)
        SELECT 'sprt', format('chain %s stage %s', p_chain, p_idx) || CASE WHEN c.name <> '' THEN ': ' || c.name ELSE '' END,
               'test', first.params0, 'base', first.params0, '', first.book_name, first.book, first.seed, st.nodes,
               st.base_ms, st.inc_ms, first.margin_ms, first.hash_mb, first.resign_moves, first.resign_score,
               first.draw_after, first.draw_moves, first.draw_score, first.max_plies, first.pairs_per_task,
               st.max_pairs, st.elo0, st.elo1, st.alpha, st.beta, first.priority, '{}', first.test_build,
               first.test_build, true, first.owner, first.throughput, net, c.base_net, false, c.base_hce
        RETURNING runs.id INTO id;
    ELSE
        SELECT s.build_id INTO built FROM chain_stages s
         WHERE s.chain_id = p_chain AND s.kind = 'build' AND s.idx < p_idx ORDER BY s.idx DESC LIMIT 1;
        INSERT INTO runs (kind, name, name0, params0, name1, params1, build_id, book_name, book, seed, nodes,
                          base_ms, inc_ms, margin_ms, hash_mb, resign_moves, resign_score, draw_after, draw_moves,
                          draw_score, max_plies, pairs_per_task, max_pairs, elo0, elo1, alpha, beta, priority,
                          settings, test_build, base_build, tasks_on_claim, owner, throughput, test_net, base_net,
                          test_hce, base_hce)
        SELECT 'sprt', format('chain %s stage %s', p_chain, p_idx) || CASE WHEN c.name <> '' THEN ': ' || c.name ELSE '' END,
               'test', xqf_spsa_set(first.id, false), 'base', xqf_spsa_set(first.id, true), '', first.book_name,
               first.book, first.seed, st.nodes, st.base_ms, st.inc_ms, first.margin_ms, first.hash_mb,
               first.resign_moves, first.resign_score, first.draw_after, first.draw_moves, first.draw_score,
               first.max_plies, first.pairs_per_task, st.max_pairs, st.elo0, st.elo1, st.alpha, st.beta,
               first.priority, '{}', built, c.base_build, true, first.owner, first.throughput,
               first.test_net, first.base_net, first.test_hce, first.base_hce
        RETURNING runs.id INTO id;
    END IF;
    UPDATE chain_stages SET state = 'running', run_id = id WHERE chain_id = p_chain AND idx = p_idx;
END $$;

-- A chain's run ended: its stage passed (an SPSA or data run that played
-- its pairs; an SPRT on H1; the next stage starts), failed or was stopped
-- (the chain ends with it).
CREATE OR REPLACE FUNCTION xqf_chain_run_ended() RETURNS trigger
LANGUAGE plpgsql AS $$
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
        UPDATE chains SET state = outcome, finished_at = now(),
                          note = format('stage %s (%s, run %s): %s', st.idx, st.kind, NEW.id, coalesce(NEW.verdict, NEW.state))
         WHERE id = st.chain_id;
    END IF;
    RETURN NULL;
END $$;

-- A stage that chain advance does (kind p_kind: build, train or net) is
-- done: p_ok passes it, recording p_build, p_net and p_detail, and starts
-- the next stage; else it fails with p_detail and the chain with it.
-- Returns false when the chain has no such stage running (done by another
-- advance, or the chain ended).
CREATE FUNCTION xqf_chain_done(p_chain bigint, p_kind text, p_ok boolean, p_build bigint, p_net bigint,
                               p_detail text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    st chain_stages%ROWTYPE;
BEGIN
    SELECT s.* INTO st FROM chain_stages s JOIN chains c ON c.id = s.chain_id
     WHERE s.chain_id = p_chain AND s.kind = p_kind AND s.state = 'running' AND c.state = 'active'
     FOR UPDATE OF c;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    UPDATE chain_stages SET state = CASE WHEN p_ok THEN 'passed' ELSE 'failed' END, build_id = p_build,
                            net_id = p_net, detail = coalesce(p_detail, '')
     WHERE chain_id = p_chain AND idx = st.idx;
    IF p_ok THEN
        PERFORM xqf_chain_start(p_chain, st.idx + 1);
    ELSE
        UPDATE chains SET state = 'failed', finished_at = now(),
                          note = format('stage %s (%s): %s', st.idx, p_kind, p_detail)
         WHERE id = p_chain;
    END IF;
    RETURN true;
END $$;

-- The build stage (as before, through the general function).
CREATE OR REPLACE FUNCTION xqf_chain_built(p_chain bigint, p_build bigint, p_note text) RETURNS boolean
LANGUAGE sql AS $$
    SELECT xqf_chain_done(p_chain, 'build', p_build IS NOT NULL, p_build, NULL, p_note)
$$;
