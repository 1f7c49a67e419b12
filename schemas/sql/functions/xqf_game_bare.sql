-- A record without its FEN (xqf_game_fen reads it, xqf_game_full puts
-- the two together again).
CREATE OR REPLACE FUNCTION xqf_game_bare(rec bytea) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
    SELECT substring(rec FROM 1 FOR 2) || '\x00'::bytea || substring(rec FROM 4 + get_byte(rec, 2))
$$;
