-- The run just created waits for the builds of its refs: an admin's
-- (active) in 'building', a tester's (pending) in 'pending' until approved.
-- grant: xqf_web
CREATE OR REPLACE FUNCTION xqf_await_builds(p_run bigint, p_test_ref text, p_base_ref text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    IF p_test_ref IS NULL AND p_base_ref IS NULL THEN
        RETURN false;
    END IF;
    UPDATE runs SET built_state = 'active', state = CASE WHEN state = 'pending' THEN 'pending' ELSE 'building' END
     WHERE id = p_run AND state IN ('active', 'pending') AND next_pair = 0;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    INSERT INTO build_requests (run_id, side, ref)
    SELECT p_run, side, ref FROM (VALUES ('test', p_test_ref), ('base', p_base_ref)) v (side, ref)
     WHERE ref IS NOT NULL;
    RETURN true;
END $$;
