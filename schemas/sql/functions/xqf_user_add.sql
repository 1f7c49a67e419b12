-- A new account (an admin's form, or xqf-tune user add): never replaces
-- one, so that the dashboard cannot change anyone's password (xqf-tune
-- user add --replace, as the owner, can).  Its line of the events log
-- (p_actor's "user add") is written with it.  Returns false when the name
-- is taken.
-- grant: xqf_web
CREATE OR REPLACE FUNCTION xqf_user_add(p_name text, p_role text, p_pwhash text, p_actor text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    INSERT INTO web_users (name, role, pwhash) VALUES (p_name, p_role, p_pwhash) ON CONFLICT (name) DO NOTHING;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    INSERT INTO web_audit (actor, action, detail) VALUES (p_actor, 'user add', format('%s (%s)', p_name, p_role));
    RETURN true;
END $$;
