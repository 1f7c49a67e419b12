-- The plies of a stored (bare) record.
CREATE OR REPLACE FUNCTION xqf_game_plies(bare bytea) RETURNS integer LANGUAGE sql IMMUTABLE AS $$
    SELECT get_byte(bare, 3) + 256 * get_byte(bare, 4)
$$;
