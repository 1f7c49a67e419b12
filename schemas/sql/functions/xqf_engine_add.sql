-- The dashboard adds engine records (xqf-web's /engines, an admin's form)
-- without writing a table: through this function, as every write of the
-- dashboard goes (SECURITY DEFINER, its search_path pinned by
-- xqf_apply_grants).  It only adds: a record's later changes stay the
-- owner's (xqf-tune engine modify), so a dashboard taken over cannot point
-- an engine that runs already use at other code.  xqf-tune adds through it
-- too: one statement for both.  The table's checks refuse a bad record.
-- Returns the new id, NULL when the name is taken.
-- grant: xqf_web
CREATE OR REPLACE FUNCTION xqf_engine_add(p_name text, p_repo text, p_build text, p_cmake text, p_binary text,
                                          p_bench text, p_nodes_re text, p_nps_re text, p_depth integer,
                                          p_protocol text, p_ranks boolean, p_he boolean, p_init text, p_hash text,
                                          p_threads text, p_net text, p_needs_net boolean, p_ref_nps bigint,
                                          p_actor text) RETURNS bigint
LANGUAGE sql SECURITY DEFINER AS $$
    WITH e AS (
    INSERT INTO engines (name, repo, build_command, cmake_target, binary_path, bench_command, bench_nodes_re,
                         bench_nps_re, bench_depth, protocol, ranks_from_one, he_letters, init, hash_option,
                         threads_option, net_option, needs_net, ref_nps, added_by)
    VALUES (p_name, p_repo, nullif(p_build, ''), nullif(p_cmake, ''), p_binary, nullif(p_bench, ''), p_nodes_re,
            p_nps_re, p_depth, p_protocol, p_ranks, p_he, string_to_array(p_init, E'\n'), p_hash, p_threads,
            p_net, p_needs_net, p_ref_nps, p_actor)
    ON CONFLICT (name) DO NOTHING
    RETURNING id),
    -- the events log's line, written with the engine or not at all
    logged AS (INSERT INTO web_audit (actor, action, detail) SELECT p_actor, 'engine add', p_name FROM e)
    SELECT id FROM e
$$;
