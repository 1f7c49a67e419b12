-- 056: the search audit made automatic (xqf-tune audit --active, the
-- xqf-auditor service), and the role it runs as.
--
-- A worker's search audit records how many plies its games of the run
-- held when they were read (plies: the watermark), so that a pass audits
-- a worker again only once its games since hold enough new moves, and a
-- pass that stopped half-way is taken up where it stopped: a worker's row
-- is written as soon as it is judged.  Rows of before this migration
-- have 0 (the worker's games all count as new).
ALTER TABLE search_audits ADD COLUMN plies bigint NOT NULL DEFAULT 0 CHECK (plies >= 0);

-- Each pass of xqf-tune audit --active: when it ran, what it audited and
-- flagged, and when it ended (NULL: it did not, it stopped or is running).
CREATE TABLE search_audit_passes (
    id          bigserial PRIMARY KEY,
    started_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    runs        integer NOT NULL DEFAULT 0 CHECK (runs >= 0),
    workers     integer NOT NULL DEFAULT 0 CHECK (workers >= 0),
    flagged     integer NOT NULL DEFAULT 0 CHECK (flagged >= 0)
);

-- xqf_auditor: the search audit's service.  It reads runs, their tasks,
-- results, games, workers, nets, builds and engines (a side's registered
-- net or engine build is searched with, the build as its engine's record
-- says), writes the audits' verdicts and its passes, and the run's history
-- through xqf_audit only; it changes no run, result or game, and reads no
-- account, session, key or secret (audit_secret is the replay audit's).
ALTER TABLE role_grants DROP CONSTRAINT role_grants_role_check;
ALTER TABLE role_grants ADD CONSTRAINT role_grants_role_check
    CHECK (role IN ('xqf_coordinator', 'xqf_web', 'xqf_builder', 'xqf_signer', 'xqf_auditor'));

INSERT INTO role_grants (role, kind, object, privileges) VALUES
    ('xqf_auditor', 'table', 'schema_migrations', 'SELECT'),
    ('xqf_auditor', 'table', 'runs', 'SELECT'),
    ('xqf_auditor', 'table', 'tasks', 'SELECT'),
    ('xqf_auditor', 'table', 'results', 'SELECT'),
    ('xqf_auditor', 'table', 'games', 'SELECT'),
    ('xqf_auditor', 'table', 'game_fens', 'SELECT'),
    ('xqf_auditor', 'table', 'workers', 'SELECT'),
    ('xqf_auditor', 'table', 'replay_audits', 'SELECT'),
    ('xqf_auditor', 'table', 'nets', 'SELECT'),
    ('xqf_auditor', 'table', 'engine_builds', 'SELECT'),
    ('xqf_auditor', 'table', 'engines', 'SELECT'),
    ('xqf_auditor', 'table', 'search_audits', 'SELECT, INSERT'),
    ('xqf_auditor', 'table', 'search_audit_passes', 'SELECT, INSERT, UPDATE'),
    ('xqf_auditor', 'function', 'xqf_audit', 'EXECUTE'),
    ('xqf_coordinator', 'table', 'search_audit_passes', 'SELECT'),
    ('xqf_web', 'table', 'search_audit_passes', 'SELECT');

SELECT xqf_apply_grants();
