-- What a string of pair letters counts: wins, draws, losses, then the
-- pentanomial LL, LD, DD (and WL), WD, WW.
CREATE OR REPLACE FUNCTION xqf_pair_counts(p text) RETURNS bigint[] LANGUAGE sql IMMUTABLE AS $$
    SELECT ARRAY[2 * a + b + c, b + 2 * d + e, c + e + 2 * f, f, e, c + d, b, a]::bigint[]
      FROM (SELECT length(p) - length(replace(p, 'a', '')) AS a, length(p) - length(replace(p, 'b', '')) AS b,
                   length(p) - length(replace(p, 'c', '')) AS c, length(p) - length(replace(p, 'd', '')) AS d,
                   length(p) - length(replace(p, 'e', '')) AS e, length(p) - length(replace(p, 'f', '')) AS f) x
$$;
