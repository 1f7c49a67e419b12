-- 011: what the web dashboard (xqf-web, docs/web.md) needs.
--
-- Live pages: every committed change of a run's counts, LLR, SPSA
-- iteration or state raises a NOTIFY on "xqf_run_progress" with the run
-- id.  PostgreSQL folds identical notifications of one transaction into
-- one, so a report batch raises one per run it touched; xqf-web throttles
-- further (a few pushes a second per run) before it pushes to browsers.
CREATE FUNCTION xqf_run_progress_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('xqf_run_progress', NEW.id::text);
    RETURN NULL;
END $$;
CREATE TRIGGER runs_progress_notify AFTER UPDATE OF pairs, iter, llr, state ON runs
    FOR EACH ROW EXECUTE FUNCTION xqf_run_progress_notify();

-- Who created a run, and approvals: a run created by a tester waits in
-- state 'pending' (never scheduled: the coordinator only serves 'active'
-- runs) until an admin approves it.  The web sets xqf.owner and
-- xqf.pending for its session around the store's usual INSERT.
ALTER TABLE runs ADD COLUMN owner text NOT NULL DEFAULT '';
ALTER TABLE runs DROP CONSTRAINT runs_state_check;
ALTER TABLE runs ADD CONSTRAINT runs_state_check
    CHECK (state IN ('active', 'paused', 'finished', 'stopped', 'pending'));
CREATE INDEX runs_owner ON runs (owner, id);

CREATE FUNCTION xqf_runs_web_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.owner := coalesce(nullif(current_setting('xqf.owner', true), ''), NEW.owner);
    IF current_setting('xqf.pending', true) = 'on' THEN
        NEW.state := 'pending';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER runs_web_insert BEFORE INSERT ON runs
    FOR EACH ROW EXECUTE FUNCTION xqf_runs_web_insert();

-- Accounts (xqf-tune user add; passwords as libsodium's crypto_pwhash_str,
-- Argon2id), their sessions (the cookie holds the token, the table its
-- SHA-256), and the audit of every action taken from the web.
CREATE TABLE web_users (
    id         bigserial PRIMARY KEY,
    name       text NOT NULL UNIQUE CHECK (name ~ '^[A-Za-z0-9_.-]{1,64}$'),
    role       text NOT NULL CHECK (role IN ('viewer', 'tester', 'admin')),
    pwhash     text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE web_sessions (
    token_hash text PRIMARY KEY,
    user_id    bigint NOT NULL REFERENCES web_users(id) ON DELETE CASCADE,
    csrf       text NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX web_sessions_expiry ON web_sessions (expires_at);

CREATE TABLE web_audit (
    id      bigserial PRIMARY KEY,
    at      timestamptz NOT NULL DEFAULT now(),
    actor   text NOT NULL,
    run_id  bigint REFERENCES runs(id) ON DELETE CASCADE,
    action  text NOT NULL,
    detail  text NOT NULL DEFAULT ''
);
CREATE INDEX web_audit_run ON web_audit (run_id, id);
