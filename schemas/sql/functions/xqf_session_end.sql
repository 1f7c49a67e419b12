-- A session signed out, and the expired ones with it.
-- grant: xqf_web
CREATE OR REPLACE FUNCTION xqf_session_end(p_token_hash text) RETURNS void
LANGUAGE sql SECURITY DEFINER AS $$
    DELETE FROM web_sessions WHERE token_hash = p_token_hash OR expires_at < now()
$$;
