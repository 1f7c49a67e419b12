-- 064: what a test of git refs changes, as Fishtest links every test to
-- its diff and OpenBench shows its compare view.
--
-- The builder (xqf-tune build --serve) and sprt/games new --test-ref read
-- them where they resolve the two commits: the commits between the base
-- and the test (git log base..test: at most 100 of them, with how many
-- there are in all) and the diff (git diff base test: at most 256 KiB,
-- cut at a line and marked when longer), recorded with the run through
-- xqf_run_changes (one call: the run's rows replaced, its name completed
-- with the test commit's subject), which the builder may execute; the
-- dashboard reads them for the run's page, xqf-tune show for its lines.
CREATE TABLE run_changes (
    run_id        bigint PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    test_ref      text NOT NULL CHECK (length(test_ref) BETWEEN 1 AND 255),
    base_ref      text NOT NULL CHECK (length(base_ref) BETWEEN 1 AND 255),
    test_commit   text NOT NULL CHECK (test_commit ~ '^[0-9a-f]{40}([0-9a-f]{24})?$'),
    base_commit   text NOT NULL CHECK (base_commit ~ '^[0-9a-f]{40}([0-9a-f]{24})?$'),
    commits_total integer NOT NULL CHECK (commits_total >= 0),
    diff          text NOT NULL CHECK (octet_length(diff) <= 262144),
    diff_cut      boolean NOT NULL,
    recorded_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE run_commits (
    run_id  bigint NOT NULL REFERENCES run_changes (run_id) ON DELETE CASCADE,
    n       integer NOT NULL CHECK (n BETWEEN 0 AND 99),
    hash    text NOT NULL CHECK (hash ~ '^[0-9a-f]{40}([0-9a-f]{24})?$'),
    subject text NOT NULL CHECK (length(subject) <= 512),
    author  text NOT NULL CHECK (length(author) <= 255),
    at      text NOT NULL CHECK (length(at) <= 40),
    PRIMARY KEY (run_id, n)
);

INSERT INTO role_grants (role, kind, object, privileges) VALUES
    ('xqf_web', 'table', 'run_changes', 'SELECT'),
    ('xqf_web', 'table', 'run_commits', 'SELECT');
-- the builder writes them through xqf_run_changes only (granted by its file's line)
