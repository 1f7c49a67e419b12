-- A new account (an admin's form): never replaces one, so that the
-- dashboard cannot change anyone's password (xqf-tune user add --replace,
-- as the owner, can).  Returns false when the name is taken.
-- grant: xqf_web
CREATE OR REPLACE FUNCTION xqf_user_add(p_name text, p_role text, p_pwhash text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    INSERT INTO web_users (name, role, pwhash) VALUES (p_name, p_role, p_pwhash) ON CONFLICT (name) DO NOTHING;
    RETURN FOUND;
END $$;
