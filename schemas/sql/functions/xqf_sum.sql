-- The sum of an array's elements (0 for an empty one).
CREATE OR REPLACE FUNCTION xqf_sum(a bigint[]) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT coalesce(sum(x), 0)::bigint FROM unnest(a) AS x $$;
