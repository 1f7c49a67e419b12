-- A bare record and its FEN put together again (xqf_game_bare's inverse).
CREATE OR REPLACE FUNCTION xqf_game_full(bare bytea, fen text) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
    SELECT substring(bare FROM 1 FOR 2) || set_byte('\x00'::bytea, 0, octet_length(fen)) ||
           convert_to(fen, 'UTF8') || substring(bare FROM 4)
$$;
