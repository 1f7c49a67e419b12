-- A preset of an engine (068_engine_presets.sql) written whole: made, or
-- its settings replaced, with its line of the events log ("engine preset
-- set", the engine, the name and the settings) in the same statement, so
-- that no preset changes without a trace.  The keys and values are the
-- settings in order, checked by the caller (service/run_presets.h).
-- Returns false when there is no such engine (nothing written).
CREATE OR REPLACE FUNCTION xqf_engine_preset_set(p_engine text, p_name text, p_keys text[], p_values text[],
                                                 p_actor text) RETURNS boolean
LANGUAGE sql SECURITY DEFINER AS $$
    WITH p AS (
    INSERT INTO engine_presets (engine_id, name, settings, updated_by)
    SELECT id, p_name, jsonb_object(p_keys, p_values), p_actor FROM engines WHERE name = p_engine
    ON CONFLICT (engine_id, name) DO UPDATE
        SET settings = EXCLUDED.settings, updated_by = EXCLUDED.updated_by, updated_at = now()
    RETURNING 1),
    logged AS (
    INSERT INTO web_audit (actor, action, detail)
    SELECT p_actor, 'engine preset set',
           p_engine || ' ' || p_name || ': ' ||
           coalesce((SELECT string_agg(k || '=' || v, ' ' ORDER BY i)
                       FROM unnest(p_keys, p_values) WITH ORDINALITY AS u(k, v, i)), '')
      FROM p)
    SELECT EXISTS (SELECT 1 FROM p)
$$;
