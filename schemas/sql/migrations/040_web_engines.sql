-- 040: the dashboard adds engine records (xqf-web's /engines, an admin's
-- form) through xqf_engine_add (schemas/functions/xqf_engine_add.sql,
-- SECURITY DEFINER), as every write of the dashboard goes: it writes no
-- table, and may add a record but not change one.
INSERT INTO role_grants (role, kind, object, privileges) VALUES
    ('xqf_web', 'function', 'xqf_engine_add', 'EXECUTE');

SELECT xqf_apply_grants();
