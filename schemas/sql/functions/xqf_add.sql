-- Element-wise sum of two count arrays of any lengths.
CREATE OR REPLACE FUNCTION xqf_add(a bigint[], b bigint[]) RETURNS bigint[]
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    n integer := greatest(coalesce(array_length(a, 1), 0), coalesce(array_length(b, 1), 0));
    out bigint[] := '{}';
BEGIN
    FOR i IN 1 .. n LOOP
        out[i] := coalesce(a[i], 0) + coalesce(b[i], 0);
    END LOOP;
    RETURN out;
END $$;
