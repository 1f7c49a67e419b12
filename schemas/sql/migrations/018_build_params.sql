-- 018: the parameters each engine build knows.
--
-- A build of another commit may know a parameter this project's table
-- does not (a branch's new switch), or lack one it has (an older build).
-- When xqf-tune build registers a binary it asks it (uci) for its spin
-- options and records each one's name and bounds here, in the order the
-- binary lists them; xqf-tune sprt/games/chain new check a set a build
-- plays against its own list.  params_listed tells a build whose list was
-- recorded (empty for an engine with no spin option) from one registered
-- before this migration, whose parameters are not known.
ALTER TABLE engine_builds ADD COLUMN params_listed boolean NOT NULL DEFAULT false;

CREATE TABLE build_params (
    build_id bigint NOT NULL REFERENCES engine_builds(id) ON DELETE CASCADE,
    idx      integer NOT NULL CHECK (idx >= 0),
    name     text NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
    min      integer NOT NULL,
    max      integer NOT NULL CHECK (min <= max),
    PRIMARY KEY (build_id, idx),
    UNIQUE (build_id, name)
);
