-- Element-wise b - a, or NULL when some element of b is below a's.
CREATE OR REPLACE FUNCTION xqf_diff(a bigint[], b bigint[]) RETURNS bigint[]
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    n integer := greatest(coalesce(array_length(a, 1), 0), coalesce(array_length(b, 1), 0));
    out bigint[] := '{}';
BEGIN
    FOR i IN 1 .. n LOOP
        out[i] := coalesce(b[i], 0) - coalesce(a[i], 0);
        IF out[i] < 0 THEN
            RETURN NULL;
        END IF;
    END LOOP;
    RETURN out;
END $$;
