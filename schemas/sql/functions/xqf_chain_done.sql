-- A stage that chain advance does (kind p_kind: build, train or net) is
-- done: p_ok passes it, recording p_build, p_net and p_detail, and starts
-- the next stage; else it fails with p_detail and the chain with it (its
-- stages not started cancelled).
-- Returns false when the chain has no such stage running (done by another
-- advance, or the chain ended).
CREATE OR REPLACE FUNCTION xqf_chain_done(p_chain bigint, p_kind text, p_ok boolean, p_build bigint, p_net bigint,
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
        UPDATE chain_stages SET state = 'cancelled' WHERE chain_id = p_chain AND state = 'waiting';
        UPDATE chains SET state = 'failed', finished_at = now(),
                          note = format('stage %s (%s): %s', st.idx, p_kind, p_detail)
         WHERE id = p_chain;
    END IF;
    RETURN true;
END $$;
