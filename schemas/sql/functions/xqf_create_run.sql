-- A run (the store's create_run, same parameters in the same order); its
-- owner ('' for xqf-tune's) and pending state (042: waiting for an admin's
-- approval) after the kind's; the engine, its record's name, then the base
-- side's engine (041; '' or the engine itself: NULL, the same).
-- p_run_settings, last, is the settings kept as columns, one JSON object
-- of column: value (046): run_settings.def's (the adjudication's rules
-- among them, 061; each engine's threads, the replay share, hash and
-- clock margin, 062; the clock and time odds, its text settings, 071).  Each
-- key must be a row of run_setting_columns, else nothing is written and
-- the caller is refused as for any column it may not write (42501: the
-- dashboard's role calls this function, and no key may reach owner, state
-- or any column but a setting's); each value is converted to its column's
-- type by jsonb_populate_record, null for NULL.  A replay share left out
-- (or null) is the run's default: none for a run of several threads
-- (Lazy SMP's games do not replay), else 1 %.  A net that waits for an
-- admin's approval (063: uploaded from the dashboard) is refused as a
-- side's net: the run service says so first, this holds for any caller.
-- Returns its id.
-- grant: xqf_web
CREATE OR REPLACE FUNCTION xqf_create_run(p_name text, p_params0 text, p_params1 text, p_build_id text, p_book_name text,
                                          p_book text[], p_nodes bigint,
                                          p_kind text, p_name0 text, p_name1 text, p_settings jsonb,
                                          p_test_build bigint, p_base_build bigint, p_tasks_on_claim boolean,
                                          p_test_net bigint, p_base_net bigint, p_ref_nps bigint, p_game_scores boolean, p_engine text,
                                          p_base_engine text, p_owner text, p_pending boolean, p_run_settings jsonb)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    refused text;
    cols text;
    vals text;
    run_id bigint;
BEGIN
    IF jsonb_typeof(p_run_settings) IS DISTINCT FROM 'object' THEN
        RAISE EXCEPTION 'xqf_create_run: the run settings are not a JSON object'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT string_agg(k, ', ' ORDER BY k) INTO refused FROM jsonb_object_keys(p_run_settings) k
     WHERE k NOT IN (SELECT name FROM run_setting_columns);
    IF refused IS NOT NULL THEN
        RAISE EXCEPTION 'xqf_create_run: not a run setting: %', refused
              USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF EXISTS (SELECT 1 FROM nets WHERE id IN (p_test_net, p_base_net) AND NOT approved) THEN
        RAISE EXCEPTION 'xqf_create_run: a side''s net waits for an admin''s approval'
              USING ERRCODE = 'check_violation';
    END IF;
    IF coalesce(jsonb_typeof(p_run_settings -> 'replay_share'), 'null') = 'null' THEN
        p_run_settings := p_run_settings || jsonb_build_object('replay_share',
            CASE WHEN coalesce((p_run_settings ->> 'threads')::integer, 1) > 1 THEN 0 ELSE 0.01 END);
    END IF;
    SELECT coalesce(string_agg(format(', %I', k), '' ORDER BY k), ''),
           coalesce(string_agg(format(', s.%I', k), '' ORDER BY k), '')
      INTO cols, vals FROM jsonb_object_keys(p_run_settings) k;
    EXECUTE format('INSERT INTO runs (kind, name, name0, params0, name1, params1, build_id, book_name, book, nodes, '
                   'settings, test_build, base_build, tasks_on_claim, test_net, base_net, test_hce, '
                   'base_hce, ref_nps, game_scores, engine, base_engine, owner, state%s) '
                   'SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, '
                   '$20, $21, $22, $23, '
                   '$24%s FROM jsonb_populate_record(NULL::runs, $25) s RETURNING id', cols, vals)
       INTO run_id
      USING p_kind, p_name, p_name0, p_params0, p_name1, p_params1, p_build_id, p_book_name, p_book, p_nodes,
            p_settings, nullif(p_test_build, 0), nullif(p_base_build, 0),
            p_tasks_on_claim, nullif(greatest(p_test_net, 0), 0), nullif(greatest(p_base_net, 0), 0),
            p_test_net < 0, p_base_net < 0, p_ref_nps, p_game_scores,
            coalesce(nullif(p_engine, ''), 'xqf'),
            nullif(nullif(p_base_engine, ''), coalesce(nullif(p_engine, ''), 'xqf')), coalesce(p_owner, ''),
            CASE WHEN p_pending THEN 'pending' ELSE 'active' END, p_run_settings;
    RETURN run_id;
END
$$;
