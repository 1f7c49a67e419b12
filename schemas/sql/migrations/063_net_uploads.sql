-- 063: nets uploaded by testers from the dashboard (xqf-web's /nets), as
-- Fishtest's nets page takes them: an uploaded net waits for an admin's
-- approval before any worker may fetch it (the coordinator serves only
-- approved nets' bytes: store_net_chunk) or any run may name it
-- (xqf_create_run refuses, the run service says why).  A net the operator
-- registers (xqf-tune net add, a chain's net stage) is approved as it is
-- recorded: the column's default, which every net before this migration
-- takes too.  approved_by and approved_at say who let an upload in; the
-- audit (web_audit) keeps the line of each upload and approval.
ALTER TABLE nets ADD COLUMN approved boolean NOT NULL DEFAULT true;
ALTER TABLE nets ADD COLUMN approved_by text NOT NULL DEFAULT '';
ALTER TABLE nets ADD COLUMN approved_at timestamptz;

-- The nets page counts and lists the runs that named each net on a side:
-- by these, not a scan of every run per net.
CREATE INDEX runs_test_net ON runs (test_net) WHERE test_net IS NOT NULL;
CREATE INDEX runs_base_net ON runs (base_net) WHERE base_net IS NOT NULL;

-- The dashboard writes nets only through xqf_net_upload and
-- xqf_net_approve (SECURITY DEFINER; granted by their files' lines).
