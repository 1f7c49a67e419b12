-- A worker's hello: its id, NULL when the name belongs to another key,
-- -1 when the key has p_names_max names already and this one is new.
CREATE OR REPLACE FUNCTION xqf_hello(p_name text, p_build text, p_cores integer, p_concurrency integer, p_auth text,
                                     p_names_max integer)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint;
BEGIN
    IF p_auth <> '' AND p_names_max > 0 AND NOT EXISTS (SELECT 1 FROM workers WHERE name = p_name)
       AND (SELECT count(*) FROM workers WHERE auth_name = p_auth) >= p_names_max THEN
        RETURN -1;
    END IF;
    INSERT INTO workers (name, build_id, cores, concurrency, auth_name)
    VALUES (p_name, p_build, p_cores, p_concurrency, nullif(p_auth, ''))
    ON CONFLICT (name) DO UPDATE SET build_id = EXCLUDED.build_id, cores = EXCLUDED.cores,
        concurrency = EXCLUDED.concurrency, last_seen = now(),
        auth_name = coalesce(workers.auth_name, EXCLUDED.auth_name)
     WHERE workers.auth_name IS NULL OR workers.auth_name = EXCLUDED.auth_name
    RETURNING id INTO v_id;
    RETURN v_id;
END $$;
