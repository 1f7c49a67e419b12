-- 071: the clock and time odds are lines of run_settings.def, its text
-- settings (the clock "10+0.1" parsed into base_ms and inc_ms, the second
-- side's own clock into base1_ms and inc1_ms), so the store writes them as
-- it writes every line: keys of xqf_create_run's one JSON object of
-- settings, which needs them in its allow-list, and out of its parameters
-- (the signature of 062; its new body is the function's file).  A chain's
-- SPRT keeps its stage's own clock and no odds (xqf_chain_start leaves the
-- four out of what it copies from the first run).
INSERT INTO run_setting_columns (name) VALUES ('base_ms'), ('inc_ms'), ('base1_ms'), ('inc1_ms');

DROP FUNCTION IF EXISTS xqf_create_run(text, text, text, text, text, text[], bigint, bigint, bigint, text, text, text,
                                       jsonb, bigint, bigint, boolean, bigint, bigint, bigint, bigint, bigint, boolean,
                                       text, text, text, boolean, jsonb);
