-- 031: a run is written whole by its one insert.  The settings that were
-- set after it (time odds, the clock's scaling, kept scores, the replay
-- share) become parameters of xqf_create_run, so that the dashboard's
-- role, which may not update runs, makes the same runs as xqf-tune
-- (tuner/cli/run_service.c is the one caller).  p_replay_share NULL: the
-- default, none for a run of several threads (Lazy SMP's games do not
-- replay, 029), else 1 %.
DROP FUNCTION xqf_create_run(text, text, text, text, text, text[], bigint, bigint, bigint, bigint, bigint, integer,
                             bigint, bigint, bigint, bigint, bigint, bigint, integer, bigint, double precision,
                             double precision, double precision, double precision, integer, text, text, text,
                             jsonb, bigint, bigint, boolean, bigint, bigint, integer);

CREATE FUNCTION xqf_create_run(p_name text, p_params0 text, p_params1 text, p_build_id text, p_book_name text,
                               p_book text[], p_seed bigint, p_nodes bigint, p_base_ms bigint, p_inc_ms bigint,
                               p_margin_ms bigint, p_hash_mb integer, p_resign_moves bigint, p_resign_score bigint,
                               p_draw_after bigint, p_draw_moves bigint, p_draw_score bigint, p_max_plies bigint,
                               p_pairs_per_task integer, p_max_pairs bigint, p_elo0 double precision,
                               p_elo1 double precision, p_alpha double precision, p_beta double precision,
                               p_priority integer, p_kind text, p_name0 text, p_name1 text, p_settings jsonb,
                               p_test_build bigint, p_base_build bigint, p_tasks_on_claim boolean,
                               p_test_net bigint, p_base_net bigint, p_threads integer, p_base1_ms bigint,
                               p_inc1_ms bigint, p_ref_nps bigint, p_game_scores boolean,
                               p_replay_share double precision)
RETURNS bigint LANGUAGE sql SECURITY DEFINER AS $$
    INSERT INTO runs (kind, name, name0, params0, name1, params1, build_id, book_name, book, seed, nodes, base_ms,
                      inc_ms, margin_ms, hash_mb, resign_moves, resign_score, draw_after, draw_moves, draw_score,
                      max_plies, pairs_per_task, max_pairs, elo0, elo1, alpha, beta, priority, settings,
                      test_build, base_build, tasks_on_claim, test_net, base_net, test_hce, base_hce, threads,
                      replay_share, base1_ms, inc1_ms, ref_nps, game_scores)
    VALUES (p_kind, p_name, p_name0, p_params0, p_name1, p_params1, p_build_id, p_book_name, p_book, p_seed,
            p_nodes, p_base_ms, p_inc_ms, p_margin_ms, p_hash_mb, p_resign_moves, p_resign_score, p_draw_after,
            p_draw_moves, p_draw_score, p_max_plies, p_pairs_per_task, p_max_pairs, p_elo0, p_elo1, p_alpha,
            p_beta, p_priority, p_settings, nullif(p_test_build, 0), nullif(p_base_build, 0), p_tasks_on_claim,
            nullif(greatest(p_test_net, 0), 0), nullif(greatest(p_base_net, 0), 0), p_test_net < 0,
            p_base_net < 0, p_threads, coalesce(p_replay_share, CASE WHEN p_threads > 1 THEN 0 ELSE 0.01 END),
            p_base1_ms, p_inc1_ms, p_ref_nps, p_game_scores)
    RETURNING id
$$;

SELECT xqf_apply_grants();
