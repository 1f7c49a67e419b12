-- 032: engines as records of the system.  Until now the cluster built,
-- benched and played one engine, ours; any Xiangqi engine that follows a
-- few conventions (a build that takes the output's name, a bench printing
-- nodes and speed) is now a record: where its source is, how it is built,
-- how its bench is read, how it is spoken to.  xqf-tune engine
-- add|list|show|modify keeps them (schemas/engine_record.h has the rules
-- and the bench reader; the checks below are the ones the database can
-- make on its own).  Our engine is the first record, as it is built and
-- benched today, so that nothing of today's workflow changes.
--
-- Commands take placeholders: <out> the path the builder wants the binary
-- at, <binary> the binary built.

CREATE TABLE engines (
    id             bigserial PRIMARY KEY,
    name           text NOT NULL UNIQUE CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$'),
    repo           text NOT NULL CHECK (repo <> '' AND length(repo) <= 512 AND repo !~ '[[:cntrl:]]'),
    -- one of the two: a command run at the tree's root, or a target of the tree's own CMake (Release)
    build_command  text CHECK (build_command <> '' AND length(build_command) <= 512
                               AND build_command !~ '[[:cntrl:]]'),
    cmake_target   text CHECK (cmake_target ~ '^[A-Za-z0-9._+-]{1,64}$'),
    -- the binary the build makes: its path in the tree (a command) or in the CMake build folder (a target)
    binary_path    text NOT NULL CHECK (binary_path <> '' AND length(binary_path) <= 512
                                        AND binary_path !~ '[[:cntrl:]]' AND binary_path !~ '^/'
                                        AND binary_path !~ '(^|/)\.\.(/|$)'),
    -- its bench: a command, its output read by two POSIX extended regexes whose first group is the
    -- number; NULL: none (a UCCI engine, say), the bench positions searched to bench_depth instead,
    -- counting the nodes the engine reports
    bench_command  text CHECK (bench_command <> '' AND length(bench_command) <= 512
                               AND bench_command !~ '[[:cntrl:]]'),
    bench_nodes_re text NOT NULL DEFAULT 'Nodes searched *: *([0-9]+)' CHECK (length(bench_nodes_re) <= 512),
    bench_nps_re   text NOT NULL DEFAULT 'Nodes/second *: *([0-9]+)' CHECK (length(bench_nps_re) <= 512),
    bench_depth    integer NOT NULL DEFAULT 10 CHECK (bench_depth BETWEEN 1 AND 64),
    -- how it is spoken to, as the worker's player specs say it (worker/spec.h: proto, ranks, letters, init)
    protocol       text NOT NULL DEFAULT 'uci' CHECK (protocol IN ('uci', 'ucci')),
    ranks_from_one boolean NOT NULL DEFAULT false,
    he_letters     boolean NOT NULL DEFAULT false,
    init           text[] NOT NULL DEFAULT '{}' CHECK (cardinality(init) <= 8
                                                       AND array_to_string(init, '') !~ '[[:cntrl:]]'),
    -- its options' names ('': it has none)
    hash_option    text NOT NULL DEFAULT 'Hash' CHECK (length(hash_option) <= 64 AND hash_option !~ '[[:cntrl:]]'),
    threads_option text NOT NULL DEFAULT 'Threads' CHECK (length(threads_option) <= 64
                                                          AND threads_option !~ '[[:cntrl:]]'),
    net_option     text NOT NULL DEFAULT 'EvalFile' CHECK (length(net_option) <= 64 AND net_option !~ '[[:cntrl:]]'),
    needs_net      boolean NOT NULL DEFAULT false,
    -- its bench speed (nodes/s) for scaling clocks (runs.ref_nps); 0: unknown
    ref_nps        bigint NOT NULL DEFAULT 0 CHECK (ref_nps BETWEEN 0 AND 1099511627776),
    added_by       text NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL DEFAULT now(),
    CHECK ((build_command IS NULL) <> (cmake_target IS NULL)),
    CHECK (NOT needs_net OR net_option <> '')
);

-- Every change of a record, a row per field changed: who (the session's
-- xqf.actor, which the store sets; else the database role), when, the old
-- and the new value as text.  Written by a trigger, so that no writer (the
-- command line, a later web page, an operator's psql) changes an engine
-- without a trace.
CREATE TABLE engine_history (
    id        bigserial PRIMARY KEY,
    engine_id bigint NOT NULL REFERENCES engines(id) ON DELETE CASCADE,
    at        timestamptz NOT NULL DEFAULT now(),
    actor     text NOT NULL,
    field     text NOT NULL,
    old_value text,
    new_value text
);
CREATE INDEX engine_history_engine ON engine_history (engine_id, id);

CREATE FUNCTION xqf_engine_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO engine_history (engine_id, actor, field, old_value, new_value)
    SELECT NEW.id, coalesce(nullif(current_setting('xqf.actor', true), ''), current_user), o.key,
           o.value #>> '{}', n.value #>> '{}'
      FROM jsonb_each(to_jsonb(OLD)) o JOIN jsonb_each(to_jsonb(NEW)) n USING (key)
     WHERE o.value IS DISTINCT FROM n.value
     ORDER BY o.key;
    RETURN NULL;
END $$;
CREATE TRIGGER engines_changed AFTER UPDATE ON engines
    FOR EACH ROW EXECUTE FUNCTION xqf_engine_changed();

-- Ours: the project's own repository (xqf-tune build --repo, default .),
-- its CMake target, its bench ("Nodes searched: N", "Nodes/second: N"),
-- UCI, and the reference speed xqf-tune's --ref-nps has by default.
INSERT INTO engines (name, repo, cmake_target, binary_path, bench_command, bench_nodes_re, bench_nps_re, protocol,
                     hash_option, threads_option, net_option, needs_net, ref_nps, added_by)
VALUES ('xqf', '.', 'xqf-engine', 'bin/xqf-engine', '<binary> bench', 'Nodes searched *: *([0-9]+)',
        'Nodes/second *: *([0-9]+)', 'uci', 'Hash', 'Threads', 'EvalFile', false, 1000000, 'migration 032');

-- Who reads them: the builder (to build and bench an engine's refs), the
-- coordinator (what a task tells workers of the engine they play) and the
-- dashboard (to show them, with their history).  Only the owner (the
-- operators' xqf-tune) adds and changes them.
INSERT INTO role_grants (role, kind, object, privileges) VALUES
    ('xqf_coordinator', 'table', 'engines', 'SELECT'),
    ('xqf_builder', 'table', 'engines', 'SELECT'),
    ('xqf_web', 'table', 'engines', 'SELECT'),
    ('xqf_web', 'table', 'engine_history', 'SELECT');

SELECT xqf_apply_grants();
