-- 015: runs that can be steered while they run, time odds, and run chains
-- (xqf-tune modify, games new --tc-base, chain new: docs/programs/xqf-tune.md).

-- Throughput share: among the runs of one priority a worker is served by
-- the run with the fewest leases per share (coordinator/sched.c), so a run
-- of share 50 gets about half the workers of a run of share 100.
-- Time odds: the second player's clock (base1_ms 0: the first player's).
ALTER TABLE runs ADD COLUMN throughput integer NOT NULL DEFAULT 100 CHECK (throughput BETWEEN 1 AND 1000);
ALTER TABLE runs ADD COLUMN base1_ms bigint NOT NULL DEFAULT 0 CHECK (base1_ms >= 0);
ALTER TABLE runs ADD COLUMN inc1_ms bigint NOT NULL DEFAULT 0 CHECK (inc1_ms >= 0);

-- What the scheduler caches changes with these too: wake the coordinators.
DROP TRIGGER runs_notify ON runs;
CREATE TRIGGER runs_notify AFTER INSERT OR UPDATE OF state, priority, throughput, max_pairs ON runs
    FOR EACH ROW EXECUTE FUNCTION xqf_runs_notify();

-- Changes a run that has not ended (NULL: leave as is): its priority,
-- throughput share, pair cap (SPSA: its iterations), or (SPSA) extends its
-- iterations by p_extend.  All or nothing, recorded in web_audit (011)
-- under p_actor.  Returns '' when done, else why nothing was changed.  A
-- cap lowered to the pairs already given out ends the run once they are
-- played; when they are, at once (verdict "max pairs").
CREATE FUNCTION xqf_modify_run(p_run bigint, p_actor text, p_priority integer, p_throughput integer,
                               p_max_pairs bigint, p_extend bigint)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    r runs%ROWTYPE;
    cap bigint;
    what text := '';
BEGIN
    SELECT * INTO r FROM runs WHERE id = p_run FOR UPDATE;
    IF NOT FOUND THEN
        RETURN format('no run %s', p_run);
    END IF;
    IF r.state IN ('finished', 'stopped') THEN
        RETURN format('run %s is %s: only a run that has not ended can be changed', p_run, r.state);
    END IF;
    IF p_throughput IS NOT NULL AND p_throughput NOT BETWEEN 1 AND 1000 THEN
        RETURN format('throughput %s%% is outside 1-1000', p_throughput);
    END IF;
    IF p_extend IS NOT NULL AND r.kind <> 'spsa' THEN
        RETURN format('run %s (%s) is not an SPSA run: only SPSA runs are extended (give --max-pairs)', p_run, r.kind);
    END IF;
    IF p_extend IS NOT NULL AND p_extend < 1 THEN
        RETURN 'the extension must be at least one pair';
    END IF;
    IF p_max_pairs IS NOT NULL AND p_extend IS NOT NULL THEN
        RETURN 'give a new cap or an extension, not both';
    END IF;
    cap := coalesce(p_max_pairs, r.max_pairs + p_extend, r.max_pairs);
    IF cap < 1 THEN
        RETURN format('max pairs %s must be at least 1', cap);
    END IF;
    IF cap < r.next_pair THEN
        RETURN format('max pairs %s is below the %s pairs already given out (%s played)', cap, r.next_pair, r.pairs);
    END IF;
    IF p_priority IS NOT NULL AND p_priority <> r.priority THEN
        what := what || format(', priority %s -> %s', r.priority, p_priority);
    END IF;
    IF p_throughput IS NOT NULL AND p_throughput <> r.throughput THEN
        what := what || format(', throughput %s%% -> %s%%', r.throughput, p_throughput);
    END IF;
    IF cap <> r.max_pairs THEN
        what := what || format(', max pairs %s -> %s', r.max_pairs, cap);
    END IF;
    IF what = '' THEN
        RETURN 'nothing to change';
    END IF;
    UPDATE runs SET priority = coalesce(p_priority, priority), throughput = coalesce(p_throughput, throughput),
                    max_pairs = cap
     WHERE id = p_run;
    INSERT INTO web_audit (actor, run_id, action, detail) VALUES (p_actor, p_run, 'modify', substr(what, 3));
    IF r.state = 'active' AND r.next_pair >= cap
       AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.run_id = p_run AND t.state IN ('queued', 'leased')) THEN
        PERFORM xqf_finish_run(p_run, 'finished', 'max pairs', NULL);
    END IF;
    RETURN '';
END $$;

-- Run chains: stages run one after the other, each when the one before
-- finished and passed.  Stage kinds: 'spsa' (its run made by xqf-tune chain
-- new; passes when it played all its pairs), 'build' (the tuned engine of
-- the SPSA stage, compiled by xqf-tune chain advance on a host with the
-- source tree: state 'running' until xqf_chain_built records it), 'sprt'
-- (made from the SPSA run here: the tuned set, and the build if one was
-- made, against the start set; passes on H1, fails the chain on H0 or the
-- pair cap).  A run that is stopped stops its chain.
CREATE TABLE chains (
    id          bigserial PRIMARY KEY,
    name        text NOT NULL DEFAULT '',
    state       text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'passed', 'failed', 'stopped')),
    note        text NOT NULL DEFAULT '',
    base_build  bigint REFERENCES engine_builds(id),    -- what the SPRTs' base plays (NULL: built-in)
    created_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);

CREATE TABLE chain_stages (
    chain_id bigint NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
    idx      integer NOT NULL CHECK (idx >= 0),
    kind     text NOT NULL CHECK (kind IN ('spsa', 'build', 'sprt')),
    state    text NOT NULL DEFAULT 'waiting' CHECK (state IN ('waiting', 'running', 'passed', 'failed', 'stopped')),
    run_id   bigint REFERENCES runs(id),
    build_id bigint REFERENCES engine_builds(id),
    -- sprt: elo0, elo1, alpha, beta, max_pairs, and nodes or base_ms/inc_ms
    elo0 double precision, elo1 double precision, alpha double precision, beta double precision,
    max_pairs bigint, nodes bigint, base_ms bigint, inc_ms bigint,
    PRIMARY KEY (chain_id, idx)
);
CREATE INDEX chain_stages_run ON chain_stages (run_id);

-- The set an SPSA run tunes to: its fixed set and theta rounded (what
-- xqf-tune export writes), or its start values (start true).
CREATE FUNCTION xqf_spsa_set(p_run bigint, p_start boolean) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT concat_ws(',', nullif(r.params0, ''),
                     (SELECT string_agg(p.name || '=' || round(CASE WHEN p_start THEN p.start ELSE p.theta END)::bigint,
                                        ',' ORDER BY p.idx)
                        FROM run_params p WHERE p.run_id = r.id))
      FROM runs r WHERE r.id = p_run
$$;

-- Starts stage p_idx of chain p_chain (the stage before passed), or ends
-- the chain as passed when there is none.
CREATE FUNCTION xqf_chain_start(p_chain bigint, p_idx integer) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    st chain_stages%ROWTYPE;
    spsa runs%ROWTYPE;
    c chains%ROWTYPE;
    built bigint;
    id bigint;
BEGIN
    SELECT * INTO c FROM chains WHERE chains.id = p_chain FOR UPDATE;
    SELECT * INTO st FROM chain_stages WHERE chain_id = p_chain AND idx = p_idx;
    IF NOT FOUND THEN
        UPDATE chains SET state = 'passed', note = 'every stage passed', finished_at = now() WHERE chains.id = p_chain;
        RETURN;
    END IF;
    IF st.kind = 'build' THEN
        UPDATE chain_stages SET state = 'running' WHERE chain_id = p_chain AND idx = p_idx;
        RETURN;
    END IF;
    -- an SPRT: from the chain's SPSA run, with the latest build before it
    SELECT r.* INTO spsa FROM chain_stages s JOIN runs r ON r.id = s.run_id
     WHERE s.chain_id = p_chain AND s.kind = 'spsa' AND s.idx < p_idx ORDER BY s.idx DESC LIMIT 1;
    SELECT s.build_id INTO built FROM chain_stages s
     WHERE s.chain_id = p_chain AND s.kind = 'build' AND s.idx < p_idx ORDER BY s.idx DESC LIMIT 1;
    INSERT INTO runs (kind, name, name0, params0, name1, params1, build_id, book_name, book, seed, nodes,
                      base_ms, inc_ms, margin_ms, hash_mb, resign_moves, resign_score, draw_after, draw_moves,
                      draw_score, max_plies, pairs_per_task, max_pairs, elo0, elo1, alpha, beta, priority,
                      settings, test_build, base_build, tasks_on_claim, owner, throughput)
    SELECT 'sprt', format('chain %s stage %s', p_chain, p_idx) || CASE WHEN c.name <> '' THEN ': ' || c.name ELSE '' END,
           'test', xqf_spsa_set(spsa.id, false), 'base', xqf_spsa_set(spsa.id, true), '', spsa.book_name,
           spsa.book, spsa.seed, st.nodes, st.base_ms, st.inc_ms, spsa.margin_ms, spsa.hash_mb,
           spsa.resign_moves, spsa.resign_score, spsa.draw_after, spsa.draw_moves, spsa.draw_score,
           spsa.max_plies, spsa.pairs_per_task, st.max_pairs, st.elo0, st.elo1, st.alpha, st.beta,
           spsa.priority, '{}', built, c.base_build, true, spsa.owner, spsa.throughput
    RETURNING runs.id INTO id;
    UPDATE chain_stages SET state = 'running', run_id = id WHERE chain_id = p_chain AND idx = p_idx;
END $$;

-- A chain's run ended: its stage passed (the next one starts), failed or
-- was stopped (the chain ends with it).
CREATE FUNCTION xqf_chain_run_ended() RETURNS trigger
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
                    WHEN st.kind = 'spsa' THEN 'passed'
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
CREATE TRIGGER runs_chain AFTER UPDATE OF state ON runs
    FOR EACH ROW WHEN (NEW.state IN ('finished', 'stopped') AND OLD.state IS DISTINCT FROM NEW.state)
    EXECUTE FUNCTION xqf_chain_run_ended();

-- The build stage of a chain was compiled (p_build) or failed (NULL, with
-- p_note): the next stage starts, or the chain fails.  Returns false when
-- the chain has no build stage waiting.
CREATE FUNCTION xqf_chain_built(p_chain bigint, p_build bigint, p_note text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    st chain_stages%ROWTYPE;
BEGIN
    SELECT s.* INTO st FROM chain_stages s JOIN chains c ON c.id = s.chain_id
     WHERE s.chain_id = p_chain AND s.kind = 'build' AND s.state = 'running' AND c.state = 'active'
     FOR UPDATE OF c;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    UPDATE chain_stages SET state = CASE WHEN p_build IS NULL THEN 'failed' ELSE 'passed' END, build_id = p_build
     WHERE chain_id = p_chain AND idx = st.idx;
    IF p_build IS NULL THEN
        UPDATE chains SET state = 'failed', finished_at = now(), note = format('stage %s (build): %s', st.idx, p_note)
         WHERE id = p_chain;
    ELSE
        PERFORM xqf_chain_start(p_chain, st.idx + 1);
    END IF;
    RETURN true;
END $$;

-- The last SPSA update is applied after the run ended (in the same
-- transaction as the report that ended it: xqf_report_batch finishes the
-- run, then the coordinator applies the task's update), so an SPRT the
-- chain has already made from it takes the final theta while it has no
-- task yet.
CREATE FUNCTION xqf_chain_theta() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE runs r SET params0 = xqf_spsa_set(NEW.id, false)
      FROM chain_stages own, chain_stages later
     WHERE own.run_id = NEW.id AND later.chain_id = own.chain_id AND later.kind = 'sprt'
       AND later.run_id = r.id AND r.next_pair = 0;
    RETURN NULL;
END $$;
CREATE TRIGGER runs_chain_theta AFTER UPDATE OF iter ON runs
    FOR EACH ROW WHEN (NEW.kind = 'spsa' AND NEW.state <> 'active') EXECUTE FUNCTION xqf_chain_theta();
