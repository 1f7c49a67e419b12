-- The build stage (as before, through the general function).
CREATE OR REPLACE FUNCTION xqf_chain_built(p_chain bigint, p_build bigint, p_note text) RETURNS boolean
LANGUAGE sql AS $$
    SELECT xqf_chain_done(p_chain, 'build', p_build IS NOT NULL, p_build, NULL, p_note)
$$;
