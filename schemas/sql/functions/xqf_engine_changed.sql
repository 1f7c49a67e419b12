-- An engine record's change, one engine_history row per field that
-- changed, by xqf.actor (else the connected role).
CREATE OR REPLACE FUNCTION xqf_engine_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO engine_history (engine_id, actor, field, old_value, new_value)
    SELECT NEW.id, coalesce(nullif(current_setting('xqf.actor', true), ''), current_user), o.key,
           o.value #>> '{}', n.value #>> '{}'
      FROM jsonb_each(to_jsonb(OLD)) o JOIN jsonb_each(to_jsonb(NEW)) n USING (key)
     WHERE o.value IS DISTINCT FROM n.value
     ORDER BY o.key;
    RETURN NULL;
END $$;
