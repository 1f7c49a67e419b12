-- A record's FEN, the record without it, and the two put together again.
CREATE OR REPLACE FUNCTION xqf_game_fen(rec bytea) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT convert_from(substring(rec FROM 4 FOR get_byte(rec, 2)), 'UTF8')
$$;
