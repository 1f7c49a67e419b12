-- 047: the dashboard shows chains and creates them (/chains, /new/chain):
-- it reads the chain tables and writes them only through xqf_chain_add
-- and xqf_chain_add_stage (schemas/sql/functions/, SECURITY DEFINER), as
-- every write of the dashboard goes; its first run through xqf_create_run.
INSERT INTO role_grants (role, kind, object, privileges) VALUES
    ('xqf_web', 'table', 'chains', 'SELECT'),
    ('xqf_web', 'table', 'chain_stages', 'SELECT'),
    ('xqf_web', 'function', 'xqf_chain_add', 'EXECUTE'),
    ('xqf_web', 'function', 'xqf_chain_add_stage', 'EXECUTE');

SELECT xqf_apply_grants();
