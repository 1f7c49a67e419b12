-- The next build a signer may sign: built for a run that waits in
-- 'building' with every request done, and not signed yet.  Returns its id,
-- SHA-256 and name (no row: nothing to sign).
CREATE OR REPLACE FUNCTION xqf_sign_next() RETURNS TABLE (id bigint, sha256 text, build_id text)
LANGUAGE sql AS $$
    SELECT b.id, b.sha256, b.build_id FROM engine_builds b JOIN runs r ON b.id IN (r.test_build, r.base_build)
     WHERE r.state = 'building' AND b.signature IS NULL AND b.blob IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM build_requests q WHERE q.run_id = r.id AND q.state <> 'done')
     ORDER BY b.id LIMIT 1
$$;
