-- A session signed in (the token's hash, its CSRF token, its lifetime).
-- grant: xqf_web
CREATE OR REPLACE FUNCTION xqf_session_add(p_token_hash text, p_user bigint, p_csrf text, p_ttl_s bigint) RETURNS void
LANGUAGE sql SECURITY DEFINER AS $$
    INSERT INTO web_sessions (token_hash, user_id, csrf, expires_at)
    VALUES (p_token_hash, p_user, p_csrf, now() + p_ttl_s * interval '1 second')
$$;
