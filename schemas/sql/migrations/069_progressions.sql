-- 069: progressions, the strength of an engine's chosen commits over
-- time, as Fishtest's regression tests measure main's: each commit (a
-- point) is the test side of one fixed-games run against one base commit,
-- every run with the same settings.  The progression only groups the runs
-- and keeps what git said of each commit when it was made (its hash, its
-- date and subject), so that its page draws Elo against the commit's date
-- without asking git again; the results are the runs' own.  A
-- progression made on the dashboard names refs the dashboard cannot
-- read: its commits (and the base's) stay NULL until the builder pins
-- each run's refs (xqf_progression_pin).
CREATE TABLE progressions (
    id          bigserial PRIMARY KEY,
    name        text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 200 AND name !~ '[[:cntrl:]]'),
    engine      text NOT NULL,
    base_ref    text NOT NULL CHECK (length(base_ref) BETWEEN 1 AND 255),
    base_commit text CHECK (base_commit ~ '^[0-9a-f]{40}([0-9a-f]{24})?$'),
    base_date   timestamptz,
    base_subject text NOT NULL DEFAULT '' CHECK (length(base_subject) <= 512),
    created_by  text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE progression_points (
    progression_id bigint NOT NULL REFERENCES progressions (id) ON DELETE CASCADE,
    run_id      bigint NOT NULL UNIQUE REFERENCES runs (id),
    ref         text NOT NULL CHECK (length(ref) BETWEEN 1 AND 255),
    git_commit  text CHECK (git_commit ~ '^[0-9a-f]{40}([0-9a-f]{24})?$'),
    committed_at timestamptz,
    subject     text NOT NULL DEFAULT '' CHECK (length(subject) <= 512),
    PRIMARY KEY (progression_id, run_id),
    UNIQUE (progression_id, git_commit)
);

INSERT INTO role_grants (role, kind, object, privileges) VALUES
    ('xqf_web', 'table', 'progressions', 'SELECT'),
    ('xqf_web', 'table', 'progression_points', 'SELECT');

SELECT xqf_apply_grants();
