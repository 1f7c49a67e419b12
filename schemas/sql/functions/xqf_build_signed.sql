-- A build signed by the signer: the signature kept, and every run that
-- waited for it started when its builds are all signed.  Returns how many
-- runs started, or NULL when the build was signed already or its bytes
-- are not the SHA-256 the signer checked.
-- grant: xqf_signer
CREATE OR REPLACE FUNCTION xqf_build_signed(p_build bigint, p_sha256 text, p_signature text) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    v_run bigint;
    v_started integer := 0;
BEGIN
    UPDATE engine_builds SET signature = p_signature
     WHERE id = p_build AND signature IS NULL AND sha256 = p_sha256;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    FOR v_run IN SELECT r.id FROM runs r WHERE r.state = 'building' AND p_build IN (r.test_build, r.base_build)
                  ORDER BY r.id LOOP
        IF xqf_builds_ready(v_run) <> 'building' THEN
            v_started := v_started + 1;
        END IF;
    END LOOP;
    RETURN v_started;
END $$;
