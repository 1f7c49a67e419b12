-- A net uploaded from the dashboard (xqf-web's POST /nets, a tester's or an
-- admin's form): its bytes, already taken by the engine's own reader
-- (nnue_load_memory) and hashed by the caller, recorded unsigned and
-- waiting for an admin's approval (063), with the audit's line in the same
-- transaction.  Returns the new id; NULL when the SHA-256 or the name is
-- registered already (the caller says which, having looked first; this is
-- the answer to a race between two uploads).  The table's checks refuse a
-- malformed SHA-256 or name.
-- grant: xqf_web
CREATE OR REPLACE FUNCTION xqf_net_upload(p_sha256 text, p_name text, p_description text, p_provenance text,
                                          p_bytes bytea, p_actor text) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    v_id bigint;
BEGIN
    INSERT INTO nets (sha256, name, description, provenance, bytes, added_by, approved)
    VALUES (p_sha256, p_name, p_description, p_provenance, p_bytes, p_actor, false)
    ON CONFLICT DO NOTHING
    RETURNING id INTO v_id;
    IF v_id IS NOT NULL THEN
        INSERT INTO web_audit (actor, action, detail)
        VALUES (p_actor, 'net upload', format('%s (net %s, sha256 %s, %s bytes)', p_name, v_id, p_sha256,
                                              octet_length(p_bytes)));
    END IF;
    RETURN v_id;
END
$$;
