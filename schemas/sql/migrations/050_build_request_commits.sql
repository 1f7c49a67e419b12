-- 050: an approval binds commits, not ref names.
--
-- A test of git refs stored only its refs (017): the builder resolved them
-- when it built, after the approval.  A tester could have a harmless
-- commit approved, then force-push the branch (or the registered engine's
-- repository could move), and the new commit was built, signed and
-- played by every worker.  Now each request records the commit its ref
-- named when the test was made: the builder resolves it at once, builds
-- nothing (git rev-parse in the repository, or its mirror fetched), and
-- pins it (xqf_build_pin, executable by the builder only); the approval
-- page shows both commits and an approval names them (xqf_approve takes
-- the commits the admin was shown and refuses any other, or a request not
-- pinned yet); before it builds, the builder reads the ref again and
-- refuses one that no longer names the pinned commit (the request and the
-- run fail with both commits named), then builds the pinned commit itself
-- (git archive of the hash), so a push between the check and the export
-- changes nothing.  xqf_build_claim takes pinned requests only.
ALTER TABLE build_requests
    ADD COLUMN git_commit text CHECK (git_commit ~ '^[0-9a-f]{40}([0-9a-f]{24})?$'),
    ADD COLUMN git_subject text NOT NULL DEFAULT '' CHECK (length(git_subject) <= 512);

-- Tests approved before this migration and still to build bound no commit:
-- they wait for an admin's approval again, of the commits pinned now.
UPDATE build_requests q SET state = 'queued', started_at = NULL, builder = ''
  FROM runs r
 WHERE r.id = q.run_id AND r.state = 'building' AND q.state IN ('queued', 'building');
UPDATE runs r SET state = 'pending'
 WHERE r.state = 'building' AND EXISTS (SELECT 1 FROM build_requests q WHERE q.run_id = r.id AND q.state = 'queued');

-- new signatures: the approval names its commits, a claim returns the commit to build
DROP FUNCTION xqf_approve(bigint);
DROP FUNCTION xqf_build_claim(text, integer);

INSERT INTO role_grants (role, kind, object, privileges) VALUES
    ('xqf_builder', 'function', 'xqf_build_pin', 'EXECUTE');
