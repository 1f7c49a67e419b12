-- 006: workers tied to the key they authenticate with.
--
-- Under CURVE every connection carries the allow-list name of its key
-- (the ZAP handler's user id).  A worker name first seen with a key stays
-- that key's: a hello with the name from another key (or from no key,
-- when the name was claimed with one) is refused, so no machine can report
-- under another's name.  Results are already tied to the worker holding
-- the lease (005), hence to the key.

ALTER TABLE workers ADD COLUMN auth_name text;   -- the key's allow-list name; NULL: none yet

DROP FUNCTION xqf_hello(text, text, integer, integer);

-- A worker says hello: its row (by name), created or refreshed; NULL when
-- the name belongs to another key.
CREATE FUNCTION xqf_hello(p_name text, p_build text, p_cores integer, p_concurrency integer, p_auth text)
RETURNS bigint LANGUAGE sql AS $$
    INSERT INTO workers (name, build_id, cores, concurrency, auth_name)
    VALUES (p_name, p_build, p_cores, p_concurrency, nullif(p_auth, ''))
    ON CONFLICT (name) DO UPDATE SET build_id = EXCLUDED.build_id, cores = EXCLUDED.cores,
        concurrency = EXCLUDED.concurrency, last_seen = now(),
        auth_name = coalesce(workers.auth_name, EXCLUDED.auth_name)
     WHERE workers.auth_name IS NULL OR workers.auth_name = EXCLUDED.auth_name
    RETURNING id
$$;
