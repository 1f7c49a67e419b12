-- 044: an SPSA run of another engine made on the web waits for the build
-- of its ref (xqf_build_done gives that one build both sides); the builder
-- checks the run's tuned options against the options the build listed to
-- `uci`, as xqf-tune spsa new --engine does: it reads run_params.
INSERT INTO role_grants (role, kind, object, privileges) VALUES
    ('xqf_builder', 'table', 'run_params', 'SELECT');

SELECT xqf_apply_grants();
