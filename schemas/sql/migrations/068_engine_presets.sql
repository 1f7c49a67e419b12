-- 068: presets, named settings of new runs kept with an engine's record
-- (OpenBench's per-engine STC, LTC and SMP settings).  A preset is a JSON
-- object of xqf-tune's options without "--" and their values as text
-- ({"tc": "10+0.1", "elo1": "5"}): xqf-tune's --preset NAME gives them
-- before the options typed (which override them), the dashboard's new-run
-- form fills its fields from them.  The front ends check a preset's
-- options by the parsing the options get before they store it
-- (service/run_presets.h); the table only keeps it an object of strings.
-- Written through xqf_engine_preset_set and xqf_engine_preset_remove,
-- each with its line of the events log in the same statement.
CREATE TABLE engine_presets (
    engine_id  bigint NOT NULL REFERENCES engines(id) ON DELETE CASCADE,
    name       text NOT NULL CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$'),
    settings   jsonb NOT NULL CHECK (jsonb_typeof(settings) = 'object'),
    updated_by text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (engine_id, name)
);

-- Ours, as Fishtest's and OpenBench's kinds of test: a short and a long
-- time control (the long one's H0 above zero, as Fishtest's LTC bounds
-- [0.5, 2.5] against STC's [0, 2], here on our default width of 5 nElo),
-- Lazy SMP at 8 threads on a short clock (Fishtest's SMP tests), and a
-- regression check: a fixed number of pairs at the long clock (games new).
INSERT INTO engine_presets (engine_id, name, settings, updated_by)
SELECT e.id, p.name, p.settings::jsonb, 'migration 068'
  FROM engines e,
       (VALUES ('STC', '{"tc": "10+0.1", "elo0": "0", "elo1": "5", "alpha": "0.05", "beta": "0.05", "max-pairs": "50000"}'),
               ('LTC', '{"tc": "60+0.6", "elo0": "0.5", "elo1": "5", "alpha": "0.05", "beta": "0.05", "max-pairs": "50000"}'),
               ('SMP', '{"tc": "5+0.05", "threads": "8", "elo0": "0", "elo1": "5", "alpha": "0.05", "beta": "0.05", "max-pairs": "50000"}'),
               ('regression', '{"tc": "60+0.6", "pairs": "10000"}')) AS p(name, settings)
 WHERE e.name = 'xqf';

-- The dashboard shows them (the engine's page) and fills its forms from them.
INSERT INTO role_grants (role, kind, object, privileges) VALUES
    ('xqf_web', 'table', 'engine_presets', 'SELECT');

SELECT xqf_apply_grants();
