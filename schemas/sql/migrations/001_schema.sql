-- 001: the tables.  Everything that must survive a coordinator restart.
-- Counts are per pair (pentanomial: ll, ld, dd (DD and WL), wd, ww) and per
-- game (wins, draws, losses, first player's view: for SPRT the test side).

CREATE TABLE engine_builds (
    id          bigserial PRIMARY KEY,
    sha256      text UNIQUE,               -- of the binary (NULL: the workers' built-in engine)
    build_id    text NOT NULL,             -- what workers report in hello
    bench_nodes bigint,                    -- its bench signature
    path        text,
    blob        bytea,
    note        text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE runs (
    id             bigserial PRIMARY KEY,
    kind           text NOT NULL CHECK (kind IN ('sprt', 'spsa')),
    state          text NOT NULL DEFAULT 'active'
                   CHECK (state IN ('active', 'paused', 'finished', 'stopped')),
    priority       integer NOT NULL DEFAULT 0,      -- higher first
    name           text NOT NULL DEFAULT '',
    -- what is played: first player "test" (SPRT) or theta+ (SPSA)
    name0          text NOT NULL DEFAULT 'test',
    params0        text NOT NULL DEFAULT '',        -- Name=value,... over the defaults
    name1          text NOT NULL DEFAULT 'base',
    params1        text NOT NULL DEFAULT '',
    build_id       text NOT NULL DEFAULT '',        -- workers must report this build ('' any)
    base_build     bigint REFERENCES engine_builds(id),
    test_build     bigint REFERENCES engine_builds(id),
    book_name      text NOT NULL DEFAULT '',
    book           text[] NOT NULL,                 -- opening lines
    seed           bigint NOT NULL DEFAULT 1,       -- opening order
    nodes          bigint NOT NULL DEFAULT 0,       -- > 0: fixed nodes per move
    base_ms        bigint NOT NULL DEFAULT 0,
    inc_ms         bigint NOT NULL DEFAULT 0,
    margin_ms      bigint NOT NULL DEFAULT 100,
    hash_mb        integer NOT NULL DEFAULT 16,
    adjudication   bigint[] NOT NULL DEFAULT '{4,600,40,8,10,0}',
    pairs_per_task integer NOT NULL CHECK (pairs_per_task BETWEEN 1 AND 1024),
    max_pairs      bigint NOT NULL CHECK (max_pairs > 0), -- SPRT: the cap; SPSA: iterations
    elo0           double precision,
    elo1           double precision,
    alpha          double precision,
    beta           double precision,
    settings       jsonb NOT NULL DEFAULT '{}',     -- kind-specific (SPSA: alpha, gamma, A, ...)
    next_pair      bigint NOT NULL DEFAULT 0,       -- first pair not yet given to a task
    pairs          bigint NOT NULL DEFAULT 0,       -- accepted complete pairs
    wins           bigint NOT NULL DEFAULT 0,
    draws          bigint NOT NULL DEFAULT 0,
    losses         bigint NOT NULL DEFAULT 0,
    ll bigint NOT NULL DEFAULT 0, ld bigint NOT NULL DEFAULT 0, dd bigint NOT NULL DEFAULT 0,
    wd bigint NOT NULL DEFAULT 0, ww bigint NOT NULL DEFAULT 0,
    reasons        bigint[] NOT NULL DEFAULT '{}',  -- games by how they ended
    llr            double precision,
    verdict        text,                            -- H1 accepted, H0 accepted, max pairs, stopped
    created_at     timestamptz NOT NULL DEFAULT now(),
    finished_at    timestamptz
);
CREATE INDEX runs_active ON runs (priority DESC, id) WHERE state = 'active';

-- SPSA (Fishtest's, tuner/spsa.h): one row per tuned parameter with its current theta.
CREATE TABLE run_params (
    run_id  bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx     integer NOT NULL,
    name    text NOT NULL,
    start   double precision NOT NULL,
    min     double precision NOT NULL,
    max     double precision NOT NULL,
    c_end   double precision NOT NULL,
    r_end   double precision NOT NULL,
    theta   double precision NOT NULL,
    PRIMARY KEY (run_id, idx),
    UNIQUE (run_id, name)
);

-- theta over iterations, for the charts.
CREATE TABLE run_param_history (
    run_id      bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    iteration   bigint NOT NULL,
    idx         integer NOT NULL,
    theta       double precision NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, iteration, idx)
);

CREATE TABLE workers (
    id          bigserial PRIMARY KEY,
    name        text NOT NULL UNIQUE,
    build_id    text NOT NULL DEFAULT '',
    cores       integer NOT NULL DEFAULT 0,
    concurrency integer NOT NULL DEFAULT 0,
    first_seen  timestamptz NOT NULL DEFAULT now(),
    last_seen   timestamptz NOT NULL DEFAULT now()   -- of its hello; see also results.updated_at
);

CREATE TABLE tasks (
    id             bigserial PRIMARY KEY,
    run_id         bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    first_pair     bigint NOT NULL,
    n_pairs        integer NOT NULL CHECK (n_pairs > 0),
    state          text NOT NULL DEFAULT 'queued'
                   CHECK (state IN ('queued', 'leased', 'done', 'cancelled')),
    params0        text NOT NULL,                   -- the sets this task plays
    params1        text NOT NULL,
    perturbation   jsonb,                           -- SPSA: flips and c_k (tuner/spsa.h)
    worker_id      bigint REFERENCES workers(id),
    lease_token    bigint UNIQUE,
    lease_deadline timestamptz,
    attempts       integer NOT NULL DEFAULT 0,      -- leases given
    last_error     text,
    done_pairs     bigint NOT NULL DEFAULT 0,       -- accepted over all leases
    wins bigint NOT NULL DEFAULT 0, draws bigint NOT NULL DEFAULT 0, losses bigint NOT NULL DEFAULT 0,
    ll bigint NOT NULL DEFAULT 0, ld bigint NOT NULL DEFAULT 0, dd bigint NOT NULL DEFAULT 0,
    wd bigint NOT NULL DEFAULT 0, ww bigint NOT NULL DEFAULT 0,
    reasons        bigint[] NOT NULL DEFAULT '{}',
    created_at     timestamptz NOT NULL DEFAULT now(),
    finished_at    timestamptz
);
CREATE INDEX tasks_queued ON tasks (run_id, id) WHERE state = 'queued';
CREATE INDEX tasks_leased ON tasks (lease_deadline) WHERE state = 'leased';
CREATE INDEX tasks_leased_run ON tasks (run_id) WHERE state = 'leased';
CREATE INDEX tasks_run ON tasks (run_id);

CREATE SEQUENCE lease_tokens;

-- One row per lease: the cumulative counts reported under it.  A report is
-- applied as its difference from this row, so a repeated report adds
-- nothing and a lease's games are counted exactly once.
CREATE TABLE results (
    task_id     bigint NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    lease_token bigint NOT NULL,
    worker_id   bigint REFERENCES workers(id),
    base_pairs  bigint NOT NULL,                    -- task pairs done when the lease began
    pairs       bigint NOT NULL DEFAULT 0,
    wins bigint NOT NULL DEFAULT 0, draws bigint NOT NULL DEFAULT 0, losses bigint NOT NULL DEFAULT 0,
    ll bigint NOT NULL DEFAULT 0, ld bigint NOT NULL DEFAULT 0, dd bigint NOT NULL DEFAULT 0,
    wd bigint NOT NULL DEFAULT 0, ww bigint NOT NULL DEFAULT 0,
    reasons     bigint[] NOT NULL DEFAULT '{}',
    reports     integer NOT NULL DEFAULT 0,         -- accepted reports
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (task_id, lease_token)
);
CREATE INDEX results_worker ON results (worker_id);
