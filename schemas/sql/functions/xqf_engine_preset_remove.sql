-- A preset of an engine removed, with its line of the events log ("engine
-- preset remove", the engine and the name, what it said) in the same
-- statement.  Returns false when the engine has no such preset.
CREATE OR REPLACE FUNCTION xqf_engine_preset_remove(p_engine text, p_name text, p_actor text) RETURNS boolean
LANGUAGE sql SECURITY DEFINER AS $$
    WITH p AS (
    DELETE FROM engine_presets p USING engines e
     WHERE e.id = p.engine_id AND e.name = p_engine AND p.name = p_name
    RETURNING p.settings),
    logged AS (
    INSERT INTO web_audit (actor, action, detail)
    SELECT p_actor, 'engine preset remove', p_engine || ' ' || p_name || ' (was ' || p.settings::text || ')' FROM p)
    SELECT EXISTS (SELECT 1 FROM p)
$$;
