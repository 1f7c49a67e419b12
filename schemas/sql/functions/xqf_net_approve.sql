-- An admin approves an uploaded net (xqf-web's POST /nets/NAME/approve):
-- from then on workers may fetch it and runs may name it.  Returns 1
-- (approved now, audited in the same transaction), 0 (approved already:
-- nothing written) or -1 (no such net).
-- grant: xqf_web
CREATE OR REPLACE FUNCTION xqf_net_approve(p_name text, p_actor text) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    v_net nets%ROWTYPE;
BEGIN
    SELECT * INTO v_net FROM nets WHERE name = p_name FOR UPDATE;
    IF NOT FOUND THEN
        RETURN -1;
    END IF;
    IF v_net.approved THEN
        RETURN 0;
    END IF;
    UPDATE nets SET approved = true, approved_by = p_actor, approved_at = now() WHERE id = v_net.id;
    INSERT INTO web_audit (actor, action, detail)
    VALUES (p_actor, 'net approve', format('%s (net %s, sha256 %s)', v_net.name, v_net.id, v_net.sha256));
    RETURN 1;
END
$$;
